"""How each node kind is built: one module per kind with ``build(ctx) -> Running``.

``edge/kinds.py`` names the module of each kind; ``edge/nodes/lifecycle.py`` is the lifecycle
they share; ``edge/app.py``'s ``Stack`` starts them in the table's order.
"""
