@_exported import TrawlJSON

#if Macros
/// Gives a `Decodable` struct Trawl's fastest typed path with one attribute: the macro writes its
/// ``JSONFieldsDecodable`` conformance (`init(fields:)`) from its stored properties, with the keys and rules the
/// compiler's `Decodable` conformance uses.
///
/// ```swift
/// import Trawl
/// import TrawlMacros
///
/// @JSONFieldsDecodable
/// struct Repo: Decodable {
///     let id: Int
///     let fullName: String
///     let topics: [String]
///     let owner: Owner         // any Decodable; a @JSONFieldsDecodable one is read straight through its init(fields:)
///     let pushedAt: Date?      // optional: decodeIfPresent (missing or null is nil)
///
///     enum CodingKeys: String, CodingKey {
///         case id, topics, owner
///         case fullName = "full_name"
///         case pushedAt = "pushed_at"
///     }
/// }
/// ```
///
/// - Keys: the cases of a `CodingKeys` enum declared inside the struct (a `String` raw value, or else the case
///   name); without one, the property names. A property that `CodingKeys` leaves out keeps its initial value.
///   (A `CodingKeys` declared in an extension is not seen: declare it inside the struct.)
/// - Optional properties (`T?`, `Optional<T>`) are read with `decodeIfPresent`, others with `decode`; a `let` with an
///   initial value is not read (as with `Decodable`); a `var` with one is.
/// - The initializer is as visible as the struct and `nonisolated`, as the compiler's `init(from:)` is, so a
///   `@MainActor` struct conforms too.
/// - A decoder with a key decoding strategy (`.convertFromSnakeCase`, `.custom`) reads the struct through
///   `init(from:)`, so that keys are converted exactly as `Decodable` converts them.
/// - Values, errors and coding paths are those of the `Decodable` path: a missing key throws `keyNotFound`, a
///   null for a required value `valueNotFound`, a value of the wrong kind `typeMismatch`. (One difference: a
///   struct with no property to read still needs an object, where the compiler's `init(from:)` takes any value.)
/// - Refused with an error: classes and enums, a struct with its own `init(from:)`, lazy properties, property
///   wrappers, members under `#if` and tuple patterns (write `init(fields:)` by hand for those).
@attached(extension, conformances: JSONFieldsDecodable, names: named(init(fields:)))
public macro JSONFieldsDecodable() = #externalMacro(module: "TrawlMacrosPlugin", type: "JSONFieldsDecodableMacro")
#endif
