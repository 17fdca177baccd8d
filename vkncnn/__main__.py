"""`python -m vkncnn`: the `vkncnn` command (vkncnn/tools/cli.py).

The command's entry point, not part of the runtime: nothing imports this module.
"""

import sys

from vkncnn.tools.cli import main

if __name__ == "__main__":
    sys.exit(main())
