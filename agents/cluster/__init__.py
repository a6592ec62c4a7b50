"""Everything that talks to Ray — the only package that imports ``ray`` (besides the lazy import in
``agents.api`` and the local model server's actor): actor creation and options (``actors``), the ``Runtime``
over actors (``ray_runtime``), where actors go (``placement``, pure), growing the executor pool when nodes join
(``node_watch``) and shipping code to a cluster (``deploy``).
"""

__all__: list[str] = []
