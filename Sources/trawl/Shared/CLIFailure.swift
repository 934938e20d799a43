import ArgumentParser

/// A failure of the work itself: message on stderr, exit status 1.
struct CLIFailure: Error, CustomStringConvertible {
    let description: String
    init(_ message: String) { description = message }
}

/// A usage error found while a command runs (exit 2): printed with that command's usage, as ArgumentParser prints
/// the ones `validate()` finds.
struct RunUsageError: Error {
    let text: String

    init(_ error: ValidationError, command: ParsableCommand.Type) {
        let name = command._commandName
        text = "Error: \(error.message)\nUsage: \(TrawlCommand.usageString(for: command))\n"
            + "  See 'trawl \(name) --help' for more information.\n"
    }
}
