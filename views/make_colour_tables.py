#!/usr/bin/python3
"""Writes views/colour_tables.cpp: the two 256-entry colour maps the heatmaps use, from their
published sources, so that the build needs neither matplotlib nor Python. Run by hand:

    cd /tmp && apt-get download python3-matplotlib && dpkg-deb -x python3-matplotlib_*.deb /tmp/mpl
    /usr/bin/python3 views/make_colour_tables.py \\
        /tmp/mpl/usr/lib/python3/dist-packages/matplotlib views/colour_tables.cpp

- viridis: matplotlib's _cm_listed.py `_viridis_data`, the 256 RGB rows of van der Walt & Smith's
  map (CC0 1.0), read as literals (matplotlib is not imported).
- diverging: Kenneth Moreland's cool-warm map ("Diverging Color Maps for Scientific Visualization",
  ISVC 2009): Msh interpolation between his published endpoints through a white-ish M = 88 centre,
  computed here at 256 positions. matplotlib's `coolwarm` (_cm.py `_coolwarm_data`, 33 samples of
  Moreland's table) is used only as a check: the script stops if any sample differs by more than
  TOLERANCE. The entries are computed here from the paper's algorithm and endpoints; no table is
  copied, so no data licence applies beyond the paper's citation.

Entries are sRGB in [0, 1] with six decimals, as matplotlib publishes viridis; the 8-bit colours a
screen shows are round(255 v) (matplotlib's to_hex), and rounding to 8 bits before interpolating
would make L* wobble by up to 0.2 between neighbouring entries."""
import ast
import math
import os
import sys

TOLERANCE = 1e-3  # largest |computed - matplotlib coolwarm| per channel, on a 0..1 scale

# Moreland's endpoints as published in floating point (his CoolWarmFloat257 table; 8-bit
# (59, 76, 192) and (180, 4, 38) in the paper).
COOL = (0.2298057, 0.298717966, 0.753683153)
WARM = (0.705673158, 0.01555616, 0.150232812)
WHITE = (0.95047, 1.0, 1.08883)  # D65, the reference white of Moreland's CIELAB


def literal(path, name):
    """The value of the module-level assignment `name = <literal>` in the Python file at path."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return ast.literal_eval(node.value)
    sys.exit(f"{path}: no assignment to {name}")


def srgb_to_linear(c):
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def linear_to_srgb(c):
    return 12.92 * c if c <= 0.0031308 else 1.055 * c ** (1 / 2.4) - 0.055


def rgb_to_lab(rgb):
    r, g, b = (srgb_to_linear(c) for c in rgb)
    xyz = (0.4124 * r + 0.3576 * g + 0.1805 * b,
           0.2126 * r + 0.7152 * g + 0.0722 * b,
           0.0193 * r + 0.1192 * g + 0.9505 * b)
    f = [v ** (1 / 3) if v > 0.008856 else 7.787 * v + 16 / 116
         for v in (xyz[i] / WHITE[i] for i in range(3))]
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def lab_to_rgb(lab):
    L, a, b = lab
    fy = (L + 16) / 116
    fs = (fy + a / 500, fy, fy - b / 200)
    x, y, z = (WHITE[i] * (f ** 3 if f ** 3 > 0.008856 else (f - 16 / 116) / 7.787)
               for i, f in enumerate(fs))
    rgb = (3.2406 * x - 1.5372 * y - 0.4986 * z,
           -0.9689 * x + 1.8758 * y + 0.0415 * z,
           0.0557 * x - 0.2040 * y + 1.0570 * z)
    return tuple(min(1.0, max(0.0, linear_to_srgb(c))) for c in rgb)


def lab_to_msh(lab):
    L, a, b = lab
    m = math.sqrt(L * L + a * a + b * b)
    return m, math.acos(L / m), math.atan2(b, a)


def msh_to_lab(msh):
    m, s, h = msh
    return m * math.cos(s), m * math.sin(s) * math.cos(h), m * math.sin(s) * math.sin(h)


def adjust_hue(msh, m_unsaturated):
    """Moreland's hue spin for interpolating from a saturated colour to an unsaturated one."""
    m, s, h = msh
    if m >= m_unsaturated:
        return h
    spin = s * math.sqrt(m_unsaturated ** 2 - m ** 2) / (m * math.sin(s))
    return h + spin if h > -math.pi / 3 else h - spin


def moreland(x):
    """Moreland 2009, section 5: the cool-warm map at x in [0, 1], as sRGB in [0, 1]."""
    m1, s1, h1 = lab_to_msh(rgb_to_lab(COOL))
    m2, s2, h2 = lab_to_msh(rgb_to_lab(WARM))
    if s1 > 0.05 and s2 > 0.05 and abs(h1 - h2) > math.pi / 3:
        m_mid = max(m1, m2, 88.0)
        if x < 0.5:
            m2, s2, h2, x = m_mid, 0.0, 0.0, 2 * x
        else:
            m1, s1, h1, x = m_mid, 0.0, 0.0, 2 * x - 1
    if s1 < 0.05 and s2 > 0.05:
        h1 = adjust_hue((m2, s2, h2), m1)
    elif s2 < 0.05 and s1 > 0.05:
        h2 = adjust_hue((m1, s1, h1), m2)
    msh = ((1 - x) * m1 + x * m2, (1 - x) * s1 + x * s2, (1 - x) * h1 + x * h2)
    return lab_to_rgb(msh_to_lab(msh))


def check_against_matplotlib(coolwarm):
    worst = 0.0
    for k, channel in enumerate(("red", "green", "blue")):
        for x, value, _ in coolwarm[channel]:
            worst = max(worst, abs(moreland(x)[k] - value))
    if worst > TOLERANCE:
        sys.exit(f"Msh cool-warm differs from matplotlib's coolwarm by {worst:.2e} > {TOLERANCE}")
    return worst


def write_table(f, name, rows):
    f.write(f"const std::array<ColourEntry, kColourTableSize> {name} = {{{{\n")
    for i, (r, g, b) in enumerate(rows):
        hex24 = "#" + "".join(f"{int(round(255 * c)):02x}" for c in (r, g, b))
        f.write(f"    {{{r:.6f}f, {g:.6f}f, {b:.6f}f}},  // {i:3d} {hex24}\n")
    f.write("}};\n\n")


def main(matplotlib_dir, out_path):
    viridis = literal(os.path.join(matplotlib_dir, "_cm_listed.py"), "_viridis_data")
    assert len(viridis) == 256 and all(len(row) == 3 for row in viridis)
    worst = check_against_matplotlib(literal(os.path.join(matplotlib_dir, "_cm.py"),
                                             "_coolwarm_data"))
    diverging = [moreland(i / 255) for i in range(256)]
    tmp = out_path + ".part"
    with open(tmp, "w") as f:
        f.write("// clang-format off\n"
                "// Generated by views/make_colour_tables.py. Do not edit; clang-format is off for these\n"
                "// tables. Entries are sRGB in [0, 1]; the comment gives entry i and its 8-bit colour.\n"
                '#include "views/colour_tables.hpp"\n\nnamespace routescope::views {\n\n')
        f.write("// viridis: Stéfan van der Walt and Nathaniel Smith's map, the 256 rows of matplotlib's\n"
                "// _cm_listed.py _viridis_data (matplotlib 3.6); the data are CC0 1.0 (public domain).\n")
        write_table(f, "kViridisTable", viridis)
        f.write("// Diverging: Kenneth Moreland's cool-warm map, \"Diverging Color Maps for Scientific\n"
                "// Visualization\" (ISVC 2009): Msh interpolation between (0.230, 0.299, 0.754) and\n"
                "// (0.706, 0.016, 0.150) through M = 88, at x = i / 255, computed from the paper (no table is\n"
                "// copied). Checked against matplotlib's coolwarm samples (largest difference\n"
                f"// {worst:.1e} per channel on 0..1).\n")
        write_table(f, "kDivergingTable", diverging)
        f.write("}  // namespace routescope::views\n")
    os.replace(tmp, out_path)
    print(f"viridis {len(viridis)}, diverging {len(diverging)}; Msh vs matplotlib coolwarm {worst:.2e}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: make_colour_tables.py MATPLOTLIB_PACKAGE_DIR OUT.cpp")
    main(sys.argv[1], sys.argv[2])
