"""The dashboard's widgets, one per module. Each shows a ``LiveView``; none computes figures."""
