"""Storage: the schema, the engine (with migrations applied on first use), writes and the hot queries.

``db`` imports nothing of ours outside ``db``: it stores what the planner has already validated.
"""
