/// A failure of the work itself: message on stderr, exit status 1.
struct CLIFailure: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }
}
