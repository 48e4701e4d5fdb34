"""Answers: each module computes one command's result as records, from pricing, workload and db."""
