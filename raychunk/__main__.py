from raychunk.cli import main

raise SystemExit(main())
