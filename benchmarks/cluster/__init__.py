"""Cluster benchmarks and the multi-host run over network namespaces (docs/cluster.md)."""
