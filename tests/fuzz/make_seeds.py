#!/usr/bin/env python3
"""Writes the fuzz targets' seed corpora (tests/fuzz/<target>/seed-*).

The seeds are small, valid inputs of each parser: request bodies of both
APIs, a GGUF and a safetensors file with a few tensors and the metadata a
loader reads, a byte-level BPE tokenizer.json, and chat templates. Run it
again after changing it; the output is deterministic. Reproducers of fixed
crashes are kept beside the seeds as crash-* files.
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def write(target, name, data):
    d = os.path.join(HERE, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def j(obj):
    return json.dumps(obj, ensure_ascii=False)


# --- requests -------------------------------------------------------------
schema = {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1},
                                           "units": {"enum": ["c", "f"]},
                                           "tags": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3}},
          "required": ["city"]}
write("requests", "seed-openai-chat", j({"model": "m", "messages": [
    {"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi there"}], "max_tokens": 16,
    "temperature": 0.7, "top_p": 0.9, "stop": ["\n\n"], "seed": 3}))
write("requests", "seed-openai-chat-tools", j({"model": "m", "messages": [
    {"role": "user", "content": [{"type": "text", "text": "weather?"}]},
    {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
                                                           "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "sunny"}],
    "tools": [{"type": "function", "function": {"name": "get_weather", "description": "d", "parameters": schema}}],
    "tool_choice": "required", "stream": True}))
write("requests", "seed-openai-chat-named-tool", j({"messages": [{"role": "user", "content": "x"}],
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
        "a": {"anyOf": [{"type": "string"}, {"type": "null"}]}, "b": {"type": ["integer", "null"]}}}}}],
    "tool_choice": {"type": "function", "function": {"name": "f"}}, "response_format": {"type": "json_object"}}))
write("requests", "seed-openai-completion", j({"model": "m", "prompt": "Once upon a time", "max_tokens": 8, "stream": False,
                                               "logprobs": None, "n": 1}))
write("requests", "seed-anthropic-messages", j({"model": "m", "max_tokens": 32, "system": "Be brief.",
    "messages": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": [{"type": "text", "text": "Hello"}]},
                 {"role": "user", "content": [{"type": "text", "text": "Weather?"}]}], "temperature": 0.5}))
write("requests", "seed-anthropic-tools", j({"model": "m", "max_tokens": 32,
    "tools": [{"name": "get_weather", "description": "d", "input_schema": schema}],
    "tool_choice": {"type": "any"},
    "messages": [{"role": "user", "content": "Weather?"},
                 {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"city": "Paris"}}]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "sunny"}]}]}))
write("requests", "seed-anthropic-count-tokens", j({"model": "m", "messages": [{"role": "user", "content": "count me"}],
                                                    "tools": [{"name": "f", "input_schema": {"type": "object"}}]}))

# --- gguf -----------------------------------------------------------------
U8, I8, U16, I16, U32, I32, F32, BOOL, STR, ARR, U64, I64, F64 = range(13)


def gstr(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def kv(key, vtype, value):
    out = gstr(key) + struct.pack("<I", vtype)
    if vtype == STR:
        return out + gstr(value)
    if vtype == ARR:
        etype, items = value
        out += struct.pack("<IQ", etype, len(items))
        for it in items:
            out += gstr(it) if etype == STR else struct.pack({I32: "<i", F32: "<f", U32: "<I"}[etype], it)
        return out
    fmt = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f", BOOL: "<?", U64: "<Q", I64: "<q",
           F64: "<d"}[vtype]
    return out + struct.pack(fmt, value)


def gguf(kvs, tensors, alignment=32):
    """tensors: (name, ggml_type, dims (ggml order), raw bytes)."""
    head = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(kvs)) + b"".join(kvs)
    offset = 0
    infos = b""
    data = b""
    for name, gtype, dims, raw in tensors:
        infos += gstr(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        infos += struct.pack("<IQ", gtype, offset)
        data += raw
        pad = (-len(data)) % alignment
        data += b"\0" * pad
        offset = len(data)
    body = head + infos
    body += b"\0" * ((-len(body)) % alignment)
    return body + data


tokens = ["a", "b", "c", "ab", "abc", "Ġ", "Ġa", "<|im_start|>", "<|im_end|>"]
tok_kvs = [kv("tokenizer.ggml.model", STR, "gpt2"), kv("tokenizer.ggml.pre", STR, "qwen2"),
           kv("tokenizer.ggml.tokens", ARR, (STR, tokens)),
           kv("tokenizer.ggml.token_type", ARR, (I32, [1, 1, 1, 1, 1, 1, 1, 3, 3])),
           kv("tokenizer.ggml.merges", ARR, (STR, ["a b", "ab c", "Ġ a"])),
           kv("tokenizer.ggml.eos_token_id", U32, 8), kv("tokenizer.ggml.bos_token_id", U32, 7)]
f32 = struct.pack("<4f", 1.0, -2.0, 0.5, 3.25)
f16 = struct.pack("<4e", 1.0, -1.0, 0.25, 2.0)
write("gguf", "seed-tokenizer", gguf([kv("general.architecture", STR, "qwen35"), kv("general.name", STR, "seed")] + tok_kvs,
                                     [("token_embd.weight", 0, [4], f32), ("output_norm.weight", 1, [2, 2], f16)]))
arch = "qwen35"
cfg = [kv("general.architecture", STR, arch), kv("general.alignment", U32, 32), kv(arch + ".block_count", U32, 2),
       kv(arch + ".context_length", U32, 256), kv(arch + ".embedding_length", U32, 8),
       kv(arch + ".feed_forward_length", U32, 16), kv(arch + ".attention.head_count", U32, 2),
       kv(arch + ".attention.head_count_kv", U32, 1), kv(arch + ".attention.key_length", U32, 4),
       kv(arch + ".attention.value_length", U32, 4), kv(arch + ".rope.freq_base", F32, 10000.0),
       kv(arch + ".attention.layer_norm_rms_epsilon", F32, 1e-6), kv(arch + ".full_attention_interval", U32, 2),
       kv("general.flags", ARR, (F32, [0.5, 1.5])), kv("general.big", U64, 2**40), kv("general.neg", I64, -5),
       kv("general.on", BOOL, True), kv("general.d", F64, 0.25)]
write("gguf", "seed-config", gguf(cfg + tok_kvs, [("blk.0.attn_norm.weight", 0, [4], f32)]))
write("gguf", "seed-empty", gguf([], []))

# --- safetensors ----------------------------------------------------------


def safetensors(entries, metadata=None):
    header = {}
    if metadata:
        header["__metadata__"] = metadata
    data = b""
    for name, dtype, shape, raw in entries:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    h = json.dumps(header).encode()
    h += b" " * ((-len(h)) % 8)
    return struct.pack("<Q", len(h)) + h + data


write("safetensors", "seed-three", safetensors([("a.weight", "F32", [2, 2], struct.pack("<4f", 1, 2, 3, 4)),
                                                ("b.weight", "F16", [4], f16),
                                                ("c.weight", "BF16", [2], b"\x80\x3f\x00\x40")], {"format": "pt"}))
write("safetensors", "seed-unsupported", safetensors([("i", "I64", [1], struct.pack("<q", 7)),
                                                      ("s", "F32", [], struct.pack("<f", 1.0))]))

# --- tokenizer_json ---------------------------------------------------------
vocab = {t: i for i, t in enumerate(["a", "b", "c", "ab", "abc", "Ġ", "Ġa", "H", "e", "l", "o", "!"])}
bpe = {"version": "1.0",
       "added_tokens": [{"id": 12, "content": "<|im_start|>", "special": True, "lstrip": False, "rstrip": False,
                         "normalized": False, "single_word": False}],
       "normalizer": None,
       "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
           {"type": "Split", "pattern": {"Regex": "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"},
            "behavior": "Isolated", "invert": False},
           {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}]},
       "post_processor": None,
       "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
       "model": {"type": "BPE", "dropout": None, "unk_token": None, "byte_fallback": False, "ignore_merges": False,
                 "vocab": vocab, "merges": ["a b", ["ab", "c"], "Ġ a"]}}
write("tokenizer_json", "seed-bpe-bytelevel", json.dumps(bpe, ensure_ascii=False))
digits = dict(bpe)
digits["normalizer"] = {"type": "Sequence", "normalizers": [{"type": "NFC"}]}
digits["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
    {"type": "Digits", "individual_digits": True},
    {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False, "use_regex": True}]}
digits["model"] = dict(bpe["model"], merges=[["a", "b"], "ab c"])
write("tokenizer_json", "seed-bpe-digits-nfc", json.dumps(digits, ensure_ascii=False))

# --- jinja ----------------------------------------------------------------
write("jinja", "seed-chatml", "{%- for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + "
      "(message.content if message.content is string else message.content | tojson) + '<|im_end|>\\n' }}"
      "{%- endfor %}{%- if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{%- endif %}")
write("jinja", "seed-tools", "{%- if tools %}{{ tools | tojson(indent=2) }}{% endif %}{% set ns = namespace(last=-1) %}"
      "{%- for m in messages[::-1] %}{% if m.role == 'user' and ns.last == -1 %}{% set ns.last = loop.revindex0 %}"
      "{% endif %}{% endfor %}{%- for m in messages %}{% if m.tool_calls %}{% for tc in m.tool_calls %}"
      "{{ tc.function.name }}({{ tc.function.arguments | tojson }}){% endfor %}{% else %}{{ m.content | trim }}"
      "{% endif %}{% if loop.index0 == ns.last %}<last>{% endif %}{% endfor %}")
write("jinja", "seed-macros", "{% macro render(x, depth=0) %}{% if x is mapping %}{% for k, v in x.items() %}"
      "{{ k }}={{ render(v, depth + 1) }};{% endfor %}{% elif x is iterable and x is not string %}"
      "[{{ x | map('string') | join(', ') }}]{% else %}{{ x }}{% endif %}{% endmacro %}"
      "{{ render(messages[2]) }}{% call(a) render(n) %}{{ a }}{% endcall %}{% filter upper %}{{ s }}{% endfilter %}")
write("jinja", "seed-ops", "{{ n // 2 }} {{ n % -3 }} {{ n ** 3 }} {{ -n }} {{ 'ab' * 3 }} {{ [1, 2] + [3] }} "
      "{{ '%05.1f|%-4s|%x' % (2.5, 'a', 255) }} {{ '{:>6}'.format(s) }} {{ s | center(11) }} {{ s[::-1] }} "
      "{{ range(10, 0, -3) | list }} {{ messages | selectattr('role', 'eq', 'user') | list | length }} "
      "{{ (messages | map(attribute='role') | unique | list) }} {{ raise_exception('x') if n < 0 }}")
write("jinja", "seed-mutation", "{% set ns = namespace(l=[]) %}{% for i in range(5) %}{% set ns.l = ns.l + [i] %}"
      "{% endfor %}{% set d = {'a': 1} %}{% set _ = d.update({'b': 2}) %}{{ ns.l }} {{ d | dictsort }} "
      "{{ ns.l | sum }} {{ ns.l | batch(2) | list }} {{ d | tojson(sort_keys=true) }}")
