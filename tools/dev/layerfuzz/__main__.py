"""`python -m vkncnn.tools.dev.layerfuzz`: the layer fuzzer's command line (runner.main)."""

import sys

from .runner import main

sys.exit(main())
