def flatten_dict(data, sep="."):
    flat = {}

    def walk(node, prefix):
        for key, value in node.items():
            path = f"{prefix}{sep}{key}" if prefix else key
            if isinstance(value, dict):
                walk(value, path)
            else:
                flat[path] = value

    walk(data, "")
    return flat
