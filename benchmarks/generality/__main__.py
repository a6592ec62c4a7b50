from benchmarks.generality.cli import main

raise SystemExit(main())
