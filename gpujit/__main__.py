"""``python -m gpujit``: prints :func:`gpujit.info`, one line per field."""
import gpujit


def main():
    for key, value in gpujit.info().items():
        if key == "devices":
            for d in value:
                major, minor = d["compute_capability"]
                print(f"device {d['id']}: {d['name']} (sm_{major}{minor}, "
                      f"{d['total_memory'] / 2**30:.1f} GiB)")
            if not value:
                print("devices: none")
        elif key == "cpu":
            if isinstance(value, str):
                print(f"cpu target: {value}")
            else:
                print(f"cpu target: {value['isa']}, {value['vector_bits']}-bit vectors, "
                      f"LLVM CPU {value['name']} (chosen by {value['chosen_by']}; the host: "
                      f"{value['host_name']}, {value['host_isa']})")
        elif key == "libdevice":
            print(f"libdevice: {value['path'] or 'not found'}"
                  + (f" (found by {value['found_by']})" if value["found_by"] else ""))
        else:
            print(f"{key}: {value}")


if __name__ == "__main__":
    main()
