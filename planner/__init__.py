"""planner: where to rent GPUs in China, on which billing mode, and whether buying would be cheaper."""

__version__ = "0.1.0"
