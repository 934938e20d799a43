import TrawlEngine

extension LinkedLibraries {
    /// The version of yajl, the streaming JSON parser under `JSONExtractor`, as loaded at run time, e.g. `2.1.0`.
    ///
    /// ```swift
    /// print("yajl \(LinkedLibraries.yajl)")   // yajl 2.1.0
    /// ```
    public static var yajl: String {
        YajlParser.libraryVersion
    }
}
