# Sourced by the v0.7.0 recorders (`. "$(dirname "$0")/stack_env.sh"`): the venv (V07, default
# ~/.cache/gym07), the stack's head server (HEAD, default 127.0.0.1:11000) as `gym`'s flag, the
# wheel's example data, and a work folder removed on exit.
V07=${V07:-$HOME/.cache/gym07}
HEAD=${HEAD:-127.0.0.1:11000}
gym=$V07/bin/gym
py=$V07/bin/python
head_arg="+head_server={host: ${HEAD%:*}, port: ${HEAD#*:}}"
site=$("$py" -c 'import nemo_gym, pathlib; print(pathlib.Path(nemo_gym.__file__).parent.parent)')
example=$site/resources_servers/example_single_tool_call/data/example.jsonl
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
