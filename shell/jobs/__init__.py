"""Jobs started by INSERT: a registry of named, detached streaming queries."""
