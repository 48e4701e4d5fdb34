"""The decision core: the only place money, stock, filters and verdict words about offers are decided."""
