#if canImport(Glibc)
import Glibc
#endif

/// Whether the standard streams are terminals, for choosing between a live display and plain log lines.
///
/// ```swift
/// if Terminal.standardErrorIsTerminal { redrawProgress() } else { printLineEveryFewSeconds() }
/// ```
public enum Terminal {
    public static var standardErrorIsTerminal: Bool { isatty(2) == 1 }
    public static var standardOutputIsTerminal: Bool { isatty(1) == 1 }
}
