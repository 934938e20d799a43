/// What a unit of a run is: a unit the job file plans, a child of a parent unit's item, a parent unit's end (the
/// place its children go before), or a parallel window of an incremental source's unit. The store and the
/// checkpoint key a unit by its ``ordinal``, an `Int` that encodes the case; a checkpoint written before this type
/// (plain ordinals for planned units, the same bit layout for children) reads back the same.
///
/// ```swift
/// let id = UnitID.window(unit: 3, index: 2, path: .whole)
/// UnitID(ordinal: id.ordinal) == id                     // true
/// UnitID.window(unit: 3, index: 2, path: WindowPath.whole.lower)   // its first half after a bisection
/// ```
///
/// Layout of the ordinal: a planned unit is its position (below 2^20); a child is
/// `2^62 | source << 52 | parent << 32 | index` and a parent end the same with index `2^32 - 1` (sources below 1,024,
/// children per parent unit below 2^32 - 1); a window is `2^61 | unit << 40 | index << 30 | path` (windows below
/// 1,024, `path` a heap index below 2^30: a window bisected at most 29 times). The ordinals of one job never collide.
enum UnitID: Sendable, Hashable, CustomStringConvertible {
    /// The `n`th unit of the job's full unit list.
    case planned(Int)
    /// Item `index` (0-based across the parent unit's pages) of parent unit `parent`, for child source `source`.
    case child(source: Int, parent: Int, index: Int)
    /// Where the children of parent unit `parent` for child source `source` end in the output order.
    case parentEnd(source: Int, parent: Int)
    /// Window `index` of planned unit `unit`'s range as cut at the start, narrowed by `path`'s bisections.
    case window(unit: Int, index: Int, path: WindowPath)

    static let childEnd = 0xFFFF_FFFF
    /// Child sources must be among the job's first 1,024 sources (10 bits of the ordinal; checked when a job file
    /// is read).
    static let childSources = 1 << 10

    var ordinal: Int {
        switch self {
        case .planned(let ordinal):
            ordinal
        case .child(let source, let parent, let index):
            1 << 62 | (source & 0x3FF) << 52 | (parent & 0xF_FFFF) << 32 | (index & 0xFFFF_FFFF)
        case .parentEnd(let source, let parent):
            UnitID.child(source: source, parent: parent, index: Self.childEnd).ordinal
        case .window(let unit, let index, let path):
            1 << 61 | (unit & 0xF_FFFF) << 40 | (index & 0x3FF) << 30 | (path.heapIndex & 0x3FFF_FFFF)
        }
    }

    /// The unit an ordinal of the store or a checkpoint names (an old checkpoint's plain ordinal is a planned unit).
    init(ordinal: Int) {
        if ordinal & (1 << 62) != 0 {
            let (source, parent, index) = (ordinal >> 52 & 0x3FF, ordinal >> 32 & 0xF_FFFF, ordinal & 0xFFFF_FFFF)
            self = index == Self.childEnd ? .parentEnd(source: source, parent: parent)
                : .child(source: source, parent: parent, index: index)
        } else if ordinal & (1 << 61) != 0 {
            self = .window(
                unit: ordinal >> 40 & 0xF_FFFF, index: ordinal >> 30 & 0x3FF,
                path: WindowPath(heapIndex: ordinal & 0x3FFF_FFFF))
        } else {
            self = .planned(ordinal)
        }
    }

    /// A unit with no pages of its own: a parent end.
    var isPlaceholder: Bool {
        if case .parentEnd = self { return true }
        return false
    }

    var description: String {
        switch self {
        case .planned(let ordinal): "unit \(ordinal)"
        case .child(let source, let parent, let index): "child \(index) of unit \(parent) (source \(source))"
        case .parentEnd(let source, let parent): "end of unit \(parent)'s children (source \(source))"
        case .window(let unit, let index, let path): "window \(index)\(path) of unit \(unit)"
        }
    }
}

/// Which part of a window its bisections leave: `whole`, then `lower`/`upper` halves of halves, as a heap index
/// (1 the whole window, `2k` and `2k + 1` the halves of `k`).
struct WindowPath: Sendable, Hashable, CustomStringConvertible {
    var heapIndex: Int

    static let whole = WindowPath(heapIndex: 1)
    /// A path this deep no longer fits the ordinal: the window is not bisected further.
    static let maxDepth = 29

    var depth: Int { Int.bitWidth - 1 - heapIndex.leadingZeroBitCount }
    var lower: WindowPath { WindowPath(heapIndex: heapIndex << 1) }
    var upper: WindowPath { WindowPath(heapIndex: heapIndex << 1 | 1) }

    /// `.0.1` for the upper half of the lower half; empty for the whole window.
    var description: String {
        guard depth > 0 else { return "" }
        return (0..<depth).reversed().map { "." + String(heapIndex >> $0 & 1) }.joined()
    }
}
