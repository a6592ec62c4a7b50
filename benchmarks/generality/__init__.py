"""The checks' generality suite (docs/generality.md): tasks over many tool-output shapes and four languages, each
with a scripted right plan and answer and wrong variants by class; a runner that puts each through the engine with
every role scripted (what code does to right and wrong answers), and an end-to-end runner on a real model.

Layout: ``locale`` (number formats), ``model`` (task, split), ``data`` + ``tools`` (the user's tools), ``phrases`` +
``kinds`` + ``shapes_*`` (task builders), ``suite`` (all tasks, halves), ``scripted`` + ``measure`` + ``report``
(the scripted measurement), ``scoring`` + ``e2e`` + ``e2e_report`` (a real model; one report with a dated
history), ``typed`` + ``typed_measure`` + ``typed_report`` (typed outputs: ``--typed``), ``cli`` (``tetrarch
bench --suite generality``).
"""

__all__: list[str] = []
