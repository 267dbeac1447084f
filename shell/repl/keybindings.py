"""The prompt's keys beyond prompt-toolkit's defaults (emacs keys, Ctrl-R search, Ctrl-C, Ctrl-D).

Why it exists: Enter must run a statement only when it is complete and otherwise open a new line; with the
completion menu open, Enter takes the chosen completion instead. Alt-Enter always inserts a line break.
"""

from __future__ import annotations

from prompt_toolkit.filters import Condition, has_completions
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent

from shell.repl.buffer import should_submit


def build_key_bindings() -> KeyBindings:
    bindings = KeyBindings()

    @Condition
    def completion_chosen() -> bool:
        from prompt_toolkit.application import get_app

        state = get_app().current_buffer.complete_state
        return state is not None and state.current_completion is not None

    @bindings.add("enter", filter=has_completions & completion_chosen)
    def _take_completion(event: KeyPressEvent) -> None:
        event.current_buffer.complete_state = None

    @bindings.add("enter", filter=~(has_completions & completion_chosen))
    def _enter(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if should_submit(buffer.text):
            buffer.validate_and_handle()
        else:
            buffer.newline(copy_margin=False)

    @bindings.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.newline(copy_margin=False)

    return bindings
