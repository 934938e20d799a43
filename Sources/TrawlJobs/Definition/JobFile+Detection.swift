import Yams

extension JobFileReader {
    /// Whether a source's `paginate:` or `items:` is left to detection from the first page: absent, or `auto`.
    func isAuto(_ node: Node?) -> Bool {
        guard let node else { return true }
        guard case .scalar(let scalar) = node, node.tagName != .null else { return false }
        return scalar.string.lowercased() == "auto"
    }
}
