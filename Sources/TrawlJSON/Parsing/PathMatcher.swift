import Synchronization

/// The key paths an extractor watches, compiled into a small automaton over document positions.
///
/// A state stands for the set of (path, components matched so far) pairs that a position in the
/// document satisfies; the parser keeps one state per open container (or -1 when no watched path
/// goes through it), so following the document costs a key comparison or two per object key in
/// watched containers and nothing elsewhere.
struct PathMatcher {
    struct State {
        /// Transitions for object keys (a numeric component matches its text as a key too).
        var keys: [(key: [UInt8], target: Int32)] = []
        /// Transitions for explicit non-negative array indices.
        var indices: [(index: Int, target: Int32)] = []
        /// The state of any other array element (reached through negative indices), or -1.
        var otherIndex: Int32 = -1
        /// The value at this state is the item collection.
        var isItems = false
        /// Capture slots whose path ends at this state.
        var captures: [Int] = []
        /// Capture slots that take this array's elements from the end: (slot, how far from the end).
        var fromEnd: [(slot: Int, distance: Int)] = []
    }

    private(set) var states: [State] = []
    /// Per state, for the callbacks' hot path: whether it names the items, and the state of an
    /// array element when no explicit index applies (-1 when there are explicit indices to check).
    private var itemsFlags: [Bool] = []
    private var plainElementState: [Int32] = []

    /// The state of the document root.
    let root: Int32 = 0

    /// Compiles the item path and the capture paths (slot `i` is `captures[i]`).
    init(items: JSONKeyPath?, captures: [JSONKeyPath]) {
        typealias Position = (path: Int, depth: Int)
        var paths: [[JSONKeyPath.Component]] = captures.map(\.components)
        if let items { paths.append(items.components) }
        let itemsPath = items == nil ? -1 : paths.count - 1

        var ids: [[Int]: Int32] = [:]
        var sets: [[Position]] = []
        func intern(_ set: [Position]) -> Int32 {
            guard !set.isEmpty else { return -1 }
            let sorted = set.sorted { ($0.path, $0.depth) < ($1.path, $1.depth) }
            let key = sorted.flatMap { [$0.path, $0.depth] }
            if let id = ids[key] { return id }
            let id = Int32(sets.count)
            ids[key] = id
            sets.append(sorted)
            states.append(State())
            return id
        }
        _ = intern(paths.indices.map { ($0, 0) })

        var next = 0
        while next < sets.count {
            let set = sets[next]
            var state = State()
            var keyTexts: [String] = []
            var explicitIndices: [Int] = []
            var fromEnd: [Position] = []
            for position in set {
                let components = paths[position.path]
                guard position.depth < components.count else {
                    if position.path == itemsPath { state.isItems = true } else { state.captures.append(position.path) }
                    continue
                }
                let component = components[position.depth]
                keyTexts.append(component.keyText)
                if case .index(let index) = component {
                    if index >= 0 { explicitIndices.append(index) } else { fromEnd.append(position) }
                }
                if case .index(let index) = component, index < 0 {
                    state.fromEnd.append((position.path, -index))
                }
            }
            for text in Set(keyTexts).sorted() {
                let advanced = set.filter {
                    $0.depth < paths[$0.path].count && paths[$0.path][$0.depth].keyText == text
                }
                state.keys.append((Array(text.utf8), intern(advanced.map { ($0.path, $0.depth + 1) })))
            }
            let fromEndAdvanced = fromEnd.map { ($0.path, $0.depth + 1) }
            for index in Set(explicitIndices).sorted() {
                let advanced = set.filter {
                    $0.depth < paths[$0.path].count && paths[$0.path][$0.depth] == .index(index)
                }
                state.indices.append((index, intern(advanced.map { ($0.path, $0.depth + 1) } + fromEndAdvanced)))
            }
            state.otherIndex = intern(fromEndAdvanced)
            states[next] = state
            next += 1
        }
        itemsFlags = states.map(\.isItems)
        plainElementState = states.map { $0.indices.isEmpty ? $0.otherIndex : -2 }
    }

    /// The state after the object key `key` in a container at `state`.
    @inline(__always)
    func afterKey(_ state: Int32, _ key: UnsafeRawPointer, _ length: Int) -> Int32 {
        for edge in states[Int(state)].keys where edge.key.count == length {
            let equal = edge.key.withUnsafeBytes { memoryEqual($0.baseAddress, key, length) }
            if equal { return edge.target }
        }
        return -1
    }

    /// The state of element `index` of an array at `state`.
    @inline(__always)
    func afterIndex(_ state: Int32, _ index: Int) -> Int32 {
        let plain = plainElementState[Int(state)]
        if plain != -2 { return plain }
        for edge in states[Int(state)].indices where edge.index == index {
            return edge.target
        }
        return states[Int(state)].otherIndex
    }

    /// Whether no watched path goes inside the elements of an array at `state` (no capture through them,
    /// none counted from its end): they can be taken whole, without following their tokens.
    func elementsAreOpaque(_ state: Int32) -> Bool {
        plainElementState[Int(state)] == -1 && states[Int(state)].fromEnd.isEmpty
    }

    @inline(__always)
    func isItems(_ state: Int32) -> Bool {
        itemsFlags[Int(state)]
    }
}

@inline(__always)
func memoryEqual(_ a: UnsafeRawPointer?, _ b: UnsafeRawPointer, _ length: Int) -> Bool {
    guard let a else { return length == 0 }
    var i = 0
    while i + 8 <= length {
        if a.loadUnaligned(fromByteOffset: i, as: UInt64.self) != b.loadUnaligned(fromByteOffset: i, as: UInt64.self) {
            return false
        }
        i += 8
    }
    while i < length {
        if a.load(fromByteOffset: i, as: UInt8.self) != b.load(fromByteOffset: i, as: UInt8.self) { return false }
        i += 1
    }
    return true
}

extension PathMatcher {
    private struct Key: Hashable {
        var items: JSONKeyPath?
        var captures: [JSONKeyPath]
    }

    /// Compiled matchers by their paths: a walk makes an extractor per page with the same paths, and compiling
    /// them for every page would cost a fetch more than the matching does. At most 64 are kept (then all are
    /// dropped).
    private static let compiledMatchers = Mutex<[Key: PathMatcher]>([:])

    /// The matcher for these paths, compiled once per process.
    static func compiled(items: JSONKeyPath?, captures: [JSONKeyPath]) -> PathMatcher {
        let key = Key(items: items, captures: captures)
        if let matcher = compiledMatchers.withLock({ $0[key] }) { return matcher }
        let matcher = PathMatcher(items: items, captures: captures)
        compiledMatchers.withLock { matchers in
            if matchers.count >= 64 { matchers.removeAll(keepingCapacity: true) }
            matchers[key] = matcher
        }
        return matcher
    }
}
