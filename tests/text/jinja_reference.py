#!/usr/bin/python3
"""Reference renderer for the chat-template differential test.

Renders chat templates with Debian's python3-jinja2 in the environment
Hugging Face transformers builds in apply_chat_template: an
ImmutableSandboxedEnvironment with trim_blocks, lstrip_blocks and loop
controls, a tojson filter that is json.dumps(ensure_ascii=False, ...), and the
raise_exception / strftime_now globals. strftime_now uses a fixed time given
in the request so that both renderers agree.

stdin:  {"now": [Y, m, d, H, M, S],
         "templates": {name: source},
         "cases": [{"name": str, "messages": [...], "tools": [...] | null,
                    "add_generation_prompt": bool, "bos_token": str,
                    "eos_token": str, "extra": {...}}]}
stdout: {template_name: {case_name: {"ok": text} | {"error": message}}}

Snippet mode, for the interpreter's own tests:
stdin:  {"now": [...], "snippets": [{"source": str, "context": {...}}]}
stdout: [{"ok": text} | {"error": message}, ...]
"""
import datetime
import json
import sys

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


def main():
    request = json.load(sys.stdin)
    now = datetime.datetime(*request["now"])

    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent,
                          separators=separators, sort_keys=sort_keys)

    def strftime_now(fmt):
        return now.strftime(fmt)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now

    if "snippets" in request:
        out = []
        for snippet in request["snippets"]:
            try:
                text = env.from_string(snippet["source"]).render(**snippet["context"])
                out.append({"ok": text})
            except Exception as e:  # noqa: BLE001
                out.append({"error": "%s: %s" % (type(e).__name__, e)})
        json.dump(out, sys.stdout)
        return

    results = {}
    for name, source in request["templates"].items():
        per_case = {}
        try:
            template = env.from_string(source)
        except Exception as e:  # noqa: BLE001 - every failure is a result
            for case in request["cases"]:
                per_case[case["name"]] = {"error": "%s: %s" % (type(e).__name__, e)}
            results[name] = per_case
            continue
        for case in request["cases"]:
            kwargs = dict(case.get("extra") or {})
            try:
                text = template.render(
                    messages=case["messages"],
                    tools=case.get("tools"),
                    documents=None,
                    add_generation_prompt=case["add_generation_prompt"],
                    bos_token=case["bos_token"],
                    eos_token=case["eos_token"],
                    **kwargs)
                per_case[case["name"]] = {"ok": text}
            except Exception as e:  # noqa: BLE001
                per_case[case["name"]] = {"error": "%s: %s" % (type(e).__name__, e)}
        results[name] = per_case
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main()
