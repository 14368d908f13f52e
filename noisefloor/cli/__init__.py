"""The command line: the parser of every command, its handlers, and the entry point."""
