"""`make woocommerce-zip`: the plugin folder as the zip WordPress installs (Plugins > Add New >
Upload), every file under one top folder named after the plugin, with fixed timestamps so the same
source gives the same bytes.

Usage: python scripts/woocommerce_zip.py PLUGIN_DIR OUT.zip"""
from pathlib import Path
import sys
import zipfile

FIXED_TIME = (2026, 1, 1, 0, 0, 0)


def build(plugin: Path, out: Path) -> list[str]:
    names = []
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(p for p in plugin.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            name = f"{plugin.name}/{path.relative_to(plugin).as_posix()}"
            info = zipfile.ZipInfo(name, FIXED_TIME)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, path.read_bytes())
            names.append(name)
    return names


if __name__ == "__main__":
    plugin, out = Path(sys.argv[1]), Path(sys.argv[2])
    files = build(plugin, out)
    print(f"{out}: {len(files)} files")
