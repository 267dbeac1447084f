"""`python -m shell` runs the same command as `streamshell`."""

from shell.cli import main

raise SystemExit(main())
