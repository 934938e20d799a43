/// The `@path;type=MIME;filename=NAME` value of a `-F` file field.
struct FormFile {
    var path: String
    var type: String?
    var filename: String?

    init(_ text: Substring) {
        var pieces = text.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
        path = pieces.isEmpty ? "" : pieces.removeFirst()
        for piece in pieces {
            if piece.hasPrefix("type=") { type = String(piece.dropFirst(5)) }
            if piece.hasPrefix("filename=") { filename = String(piece.dropFirst(9)) }
        }
    }
}
