#!/usr/bin/env python3
"""A KV-event subscriber as a cluster router would run one (docs/kv-events.md).

Subscribes to a `lineage serve --kv-events` endpoint, decodes every batch
(multipart [topic, u64 big-endian sequence, msgpack [ts, [events]]]) and
rebuilds the set of restorable block-aligned prefixes from the chained
BlockStored / BlockRemoved / AllBlocksCleared events. After each batch it
prints one line: `SEQ COUNT DIGEST`, where COUNT is the number of prefixes
and DIGEST the FNV-1a 64 of the sorted lines `LENGTH:F` joined by newlines,
F being the FNV-1a 64 of the prefix's token ids joined by commas (computed
block by block from the parent's, so a long prefix costs one block). It prints `ready` once connected
and exits after the batch numbered --last.
"""
import argparse
import sys

import msgpack
import zmq


FNV_START = 0xCBF29CE484222325


def fnv1a64(data: bytes, h: int = FNV_START) -> int:
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--endpoint", required=True)
    ap.add_argument("--last", type=int, required=True, help="exit after this sequence number")
    ap.add_argument("--timeout-ms", type=int, default=60000)
    args = ap.parse_args()

    sock = zmq.Context().socket(zmq.SUB)
    sock.setsockopt(zmq.SUBSCRIBE, b"")
    sock.setsockopt(zmq.RCVTIMEO, args.timeout_ms)
    sock.connect(args.endpoint)
    print("ready", flush=True)

    prefix_of = {}  # block hash -> (tokens from the start, FNV of their text)

    while True:
        try:
            topic, seq_bytes, payload = sock.recv_multipart()
        except zmq.Again:
            print("timeout", flush=True)
            return 2
        seq = int.from_bytes(seq_bytes, "big")
        batch = msgpack.unpackb(payload, raw=False)
        _ts, events = batch[0], batch[1]
        for ev in events:
            tag = ev[0]
            if tag == "AllBlocksCleared":
                prefix_of.clear()
            elif tag == "BlockStored":
                hashes, parent, token_ids, block_size = ev[1], ev[2], ev[3], ev[4]
                if len(token_ids) != block_size * len(hashes):
                    print(f"error: {len(token_ids)} tokens for {len(hashes)} blocks of {block_size}", flush=True)
                    return 3
                for i, h in enumerate(hashes):
                    if parent is not None and parent not in prefix_of:
                        print(f"error: block {h} arrived before its parent {parent}", flush=True)
                        return 3
                    text = ",".join(str(t) for t in token_ids[i * block_size:(i + 1) * block_size])
                    if parent is None:
                        prefix_of[h] = (block_size, fnv1a64(text.encode("ascii")))
                    else:
                        length, state = prefix_of[parent]
                        prefix_of[h] = (length + block_size, fnv1a64(("," + text).encode("ascii"), state))
                    parent = h
            elif tag == "BlockRemoved":
                for h in ev[1]:
                    prefix_of.pop(h, None)
            else:
                print(f"error: unknown event {tag!r}", flush=True)
                return 3
        lines = sorted(f"{length}:{state}" for length, state in prefix_of.values())
        digest = fnv1a64("\n".join(lines).encode("ascii"))
        print(f"{seq} {len(lines)} {digest}", flush=True)
        if seq >= args.last:
            return 0


if __name__ == "__main__":
    sys.exit(main())
