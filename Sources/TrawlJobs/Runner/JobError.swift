/// A bulk job could not start or go on (as opposed to a page failing, which is reported and skipped).
public struct JobError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public var hint: String?

    public static func state(_ message: String, hint: String?) -> JobError {
        JobError(message: message, hint: hint)
    }

    public var description: String { hint.map { "\(message) (\($0))" } ?? message }
}
