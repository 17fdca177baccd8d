"""Developer tools: for people working on vkncnn itself, not the user's commands.

Run them as modules, e.g. `python -m vkncnn.tools.dev.layer_index`.
"""
