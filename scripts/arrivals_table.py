#!/usr/bin/env python3
"""The arrival-detection table from a merged results.csv of the
configs/netvm/arrivals-*.ini sweeps (scripts/arrivals_scale.sh): for each
node count and workload, the ring, counter and flags side by side: the bytes
a node keeps to detect arrivals, the flag loads per node, the median wait
for a round's arrivals, the median sweep over the flags (last flag landed
to all seen) and the throughput of the transfers, from the first post
(`post_window_throughput_gbps`: the schemes differ there, not in the
buffers' set-up, which the end-to-end `throughput_gbps` adds).

    python3 scripts/arrivals_table.py RESULTS.csv
"""
import csv
import sys


def main(argv):
    if len(argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        rows = list(csv.DictReader(open(argv[1], newline="")))
    except OSError as e:
        print(f"arrivals_table: {e}", file=sys.stderr)
        return 2
    need = ["label", "workload", "workload.arrivals", "nodes", "arrival_state_bytes", "flag_loads",
            "arrival_wait_us_p50", "flag_detect_delay_us_p50", "post_window_throughput_gbps", "status"]
    missing = [c for c in need if rows and c not in rows[0]]
    if not rows or missing:
        print(f"arrivals_table: {argv[1]} is not a results file of the arrivals sweeps "
              f"(missing: {', '.join(missing) or 'every row'})", file=sys.stderr)
        return 2
    print("| nodes | workload | arrivals | state B/node | flag loads/node | wait p50 µs | flag sweep p50 µs "
          "| throughput Gb/s |")
    print("|---|---|---|---|---|---|---|---|")
    order = {"ring": 0, "counter": 1, "flags": 2}
    failed = 0
    for r in sorted(rows, key=lambda r: (int(r["nodes"] or 0), r["workload"], order.get(r["workload.arrivals"], 9))):
        if r["status"] != "ok":
            failed += 1
            print(f"| {r['nodes']} | {r['workload']} | {r['workload.arrivals']} | failed: {r['status']} | | | | |")
            continue
        n = int(r["nodes"])
        loads = float(r["flag_loads"]) / n
        delay = f"{float(r['flag_detect_delay_us_p50']):.4g}" if r["workload.arrivals"] == "flags" else "-"
        print(f"| {n} | {r['workload']} | {r['workload.arrivals']} | {float(r['arrival_state_bytes']):g} | "
              f"{loads:.4g} | {float(r['arrival_wait_us_p50']):.4g} | {delay} | "
              f"{float(r['post_window_throughput_gbps']):.4g} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
