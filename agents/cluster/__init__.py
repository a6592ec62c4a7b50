"""Everything that talks to Ray — the only package that imports ``ray`` (besides the local model server's actor):
starting or joining Ray and the driver's calls to the Supervisor (``driver``, which ``agents.api`` imports only for
``runtime="ray"``), actor creation and options (``actors``), the ``Runtime``
over actors (``ray_runtime``), where actors go (``placement``, pure), growing the executor pool when nodes join
(``node_watch``) and shipping code to a cluster (``deploy``).
"""

__all__: list[str] = []
