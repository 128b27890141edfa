"""How each node kind is built: one module per kind with ``build(ctx) -> Running``.

``edge/kinds.py`` names each kind's module; ``edge/app.py``'s ``Stack`` builds and starts them
in the table's order (docs/nodes.md, "Adding a node kind").

Public: ``lifecycle`` (``Running``, ``BuildContext``, ``NodeThread``: what a kind's module
returns and gets). The kinds' modules are loaded by name from the table, not imported.
"""
