"""Storage: the schema, the engine (with migrations applied on first use), writes and the hot queries.

``db`` imports nothing of ours outside ``db`` but the ``vocab`` leaf (run and stock statuses): it stores
what the planner has already validated.
"""
