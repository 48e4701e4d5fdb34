"""Workload estimates: model architectures, memory, FLOPs, GPU-hours and decode speed."""
