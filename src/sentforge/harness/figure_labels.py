"""Labels beside a scatter plot's points that overlap no other label, point, obstacle or legend (matplotlib's own
annotations overlap; adjustText would be one more dependency for one figure)."""

from __future__ import annotations

from typing import Any

# Where a point's label may go, in points from it (dx, dy, horizontal and vertical alignment), nearest first;
# the same directions are tried again farther out.
LABEL_SPOTS = ((7, 3, "left", "bottom"), (-7, 3, "right", "bottom"), (7, -3, "left", "top"),
               (-7, -3, "right", "top"), (0, 8, "center", "bottom"), (0, -8, "center", "top"))
LABEL_REACH = (1, 2, 3.5, 5)  # the spots' distances tried, as multiples


def place_labels(axes: Any, points: list[tuple[float, float]], labels: list[str], colors: list[str] | None = None,
                 fontsize: float = 7, obstacles: list[tuple[float, float, float, float]] = ()) -> list[Any]:
    """Annotate each point (data coordinates) with its label at the first spot beside it (LABEL_SPOTS, nearer
    first) where the label's box overlaps no label placed before it, no point, no obstacle (data boxes x0, y0,
    x1, y1, such as error bars) and not the legend, and stays inside the axes;
    a label moved past the nearest spots gets a thin line to its point. When no spot is free, the last one
    tried. Draw after the axes' limits are final: the boxes are measured on the figure as laid out then."""
    figure = axes.figure
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    frame = axes.get_window_extent(renderer)
    centres = [axes.transData.transform(point) for point in points]
    pad = 4.0  # pixels around a point that a label keeps clear of
    from matplotlib.transforms import Bbox

    legend = axes.get_legend()
    taken: list[Any] = [legend.get_window_extent(renderer)] if legend is not None else []
    for x0, y0, x1, y1 in obstacles:
        (left, bottom), (right, top) = axes.transData.transform([(x0, y0), (x1, y1)])
        taken.append(Bbox([[min(left, right) - 2, min(bottom, top) - 2], [max(left, right) + 2, max(bottom, top) + 2]]))
    placed = []
    for index, (point, label) in enumerate(zip(points, labels)):
        color = colors[index] if colors else "black"
        text = None
        for reach in LABEL_REACH:
            for dx, dy, ha, va in LABEL_SPOTS:
                if text is not None:
                    text.remove()
                far = reach > LABEL_REACH[0]
                text = axes.annotate(label, point, textcoords="offset points", xytext=(dx * reach, dy * reach),
                                     ha=ha, va=va, fontsize=fontsize, color=color,
                                     arrowprops={"arrowstyle": "-", "color": "grey", "linewidth": 0.5,
                                                 "shrinkA": 0, "shrinkB": 3} if far else None)
                box = name_box(text, renderer)
                inside = (box.x0 >= frame.x0 and box.x1 <= frame.x1 and box.y0 >= frame.y0 and box.y1 <= frame.y1)
                clear = not any(box.overlaps(other) for other in taken) and not any(
                    box.x0 - pad <= x <= box.x1 + pad and box.y0 - pad <= y <= box.y1 + pad for x, y in centres)
                if inside and clear:
                    break
            else:
                continue
            break
        taken.append(name_box(text, renderer))
        placed.append(text)
    return placed


def name_box(annotation: Any, renderer: Any) -> Any:
    """The window box of an annotation's text, without its line to the point."""
    from matplotlib.text import Text

    annotation.update_positions(renderer)
    return Text.get_window_extent(annotation, renderer)
