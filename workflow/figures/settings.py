"""Every drawing setting the figures share, in one place: sizes, colours, axis labels and the
paper rc style. Figure modules import from here and define none of their own. The bootstrap
behind each CI is not a drawing setting: it is :class:`workflow.stats.Bootstrap`, built from the
config's ``statistics`` section like every other statistic of the workflow.
"""

from __future__ import annotations

from typing import Any

from workflow.layers import H_REPR_LAYERS, LAYERS

# Column width of a two-column paper, and the full text width for two-panel figures.
COLUMN_WIDTH_IN = 3.5
DOUBLE_WIDTH_IN = 7.0
FIG_HEIGHT_IN = 2.6
# Height per row of a forest plot (one arm at one endpoint), and per panel's title and axis.
SENSITIVITY_ROW_IN = 0.22
FONT_SIZE = 8
PNG_DPI = 200

# Axis labels.
UPDATE_LABEL = "common-relaxation updates"
H_REPR_LABEL = rf"$H_{{\mathrm{{repr}}}}$ = 1 − mean CKA({', '.join(H_REPR_LAYERS)})"
ACC_GAP_LABEL = "accuracy gap (pp)"
DISAGREEMENT_LABEL = "disagreement (% of test images)"
CKA_LABEL = r"linear CKA ($S_{ABC}$ vs $S_{BAC}$)"
LAYER_LABEL = "layer"
PROTOCOL_LABEL = "protocol"
BUDGET_LABEL = "probe training examples per class"
PROBE_DIFF_LABEL = r"probe accuracy $S_{ABC}$ − $S_{BAC}$ (pp)"
LR_LABEL = "learning rate"
FINAL_LOSS_LABEL = "final loss (cross-entropy)"
COMPARISON_LABEL = "comparison, by endpoint"
SENSITIVITY_ROWS_LABEL = "reading · endpoint"
NO_DATA = "no data"
# The sensitivity figure's panels: analysis in summary/sensitivity.csv -> panel title.
SENSITIVITY_PANELS = {"variant": "training variants", "matching": "matching rules"}

# Legend entries, tick names and default titles.
PER_SEED_LABEL = "per seed"
ORDER_PAIRS_NAME = "order pairs"
FLOOR_PAIRS_NAME = "same-order pairs"
EXCESS_NAME = "excess"
EXCESS_LABEL = "excess $H_{\\mathrm{repr}}$"
DIVERGED_LABEL = "diverged"
PROTOCOL_NAMES = ("class split", "rotated")
ACTIVATION_NAMES = ("ReLU", "LeakyReLU")
NOISE_FLOOR_TICKS = ("order", "floor")
NOISE_FLOOR_NAMES = ("order effect", "noise floor")
NOISE_FLOOR_TITLE = "order effect vs same-order noise floor"

# The layers whose CKA the layer figure draws, in network order.
CKA_LAYERS = LAYERS

# Beyond this horizon a linear x axis squeezes the early checkpoints, where most change happens.
LOG_X_THRESHOLD = 20_000
LONG_HORIZON_MARKS = (10_000, 25_000, 50_000)

SEED_COLOR = "0.6"
MEAN_COLOR = "C0"
FLOOR_COLOR = "C2"
MARGIN_COLOR = "C3"
ACTIVATION_COLORS = ("C0", "C1")
DIVERGED_COLOR = "red"
REFERENCE_COLOR = "0.3"
NOTE_COLOR = "0.4"

# Applied while a figure is built and while it is saved: tick labels are created lazily at draw
# time, so the same settings must be active both times. Type 42 keeps PDF text editable.
RC: dict[str, Any] = {
    "font.size": FONT_SIZE,
    "axes.titlesize": FONT_SIZE,
    "axes.labelsize": FONT_SIZE,
    "xtick.labelsize": FONT_SIZE,
    "ytick.labelsize": FONT_SIZE,
    "legend.fontsize": FONT_SIZE,
    "figure.titlesize": FONT_SIZE,
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "pdf.fonttype": 42,
    "lines.linewidth": 1.0,
    # Compact legend entries: the legend sits above a 3.5 in axis and must not overflow it.
    "legend.handlelength": 1.5,
    "legend.handletextpad": 0.5,
    "legend.columnspacing": 1.0,
}
# No timestamps or software tags, so reruns give byte-identical files.
SAVE_METADATA: dict[str, dict[str, None]] = {
    "png": {"Software": None},
    "pdf": {"CreationDate": None},
}


def seeds_label(n: int) -> str:
    """ "n = 1 seed", "n = 5 seeds"."""
    return f"n = {n} seed" if n == 1 else f"n = {n} seeds"
