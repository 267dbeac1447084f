"""The interactive shell on a terminal: prompt, highlighting, completion, history, live results, demo mode.

Only this package and shell.render import prompt-toolkit and rich; the core (session, planner, engine) stays free
of them, and script mode never loads them.
"""
