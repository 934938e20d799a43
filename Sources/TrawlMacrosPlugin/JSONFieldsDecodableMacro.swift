// The plugin is built with swift-syntax only with the trait "Macros" (Package.swift); without it, an empty tool.
#if Macros
import SwiftCompilerPlugin
import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// `@JSONFieldsDecodable`: writes a struct's `init(fields:)` from its stored properties, the way the compiler
/// writes `init(from:)` for `Decodable`: the same keys (the cases of a `CodingKeys` enum declared in the type, with
/// their raw values, or else the property names), `decodeIfPresent` for optional properties, no value for a
/// `let` with an initial value or a property that `CodingKeys` leaves out. A decoder with a key decoding strategy
/// reads the type through `init(from:)` instead, so that its keys are converted as `Decodable`'s are.
public struct JSONFieldsDecodableMacro: ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax,
        attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax],
        in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard let structDecl = declaration.as(StructDeclSyntax.self) else {
            context.diagnose(Diagnostic(node: node, message: FieldsMessage.notAStruct))
            return []
        }
        if let custom = customInitializer(in: structDecl) {
            context.diagnose(Diagnostic(node: custom, message: FieldsMessage.hasInitFromDecoder))
            return []
        }
        let codingKeys = CodingKeysTable(structDecl)
        var lines: [String] = []
        var copies: [String] = []
        var failed = false
        for property in storedProperties(of: structDecl, in: context, failed: &failed) {
            let key: String
            if let codingKeys {
                guard let found = codingKeys.keys[property.name] else { continue }  // left out: keeps its initial value
                key = found
            } else {
                key = stringLiteral(property.name)
            }
            let method = property.isOptional ? "decodeIfPresent" : "decode"
            lines.append("self.\(property.spelling) = try fields.\(method)(\(key))")
            copies.append("self.\(property.spelling) = decoded.\(property.spelling)")
        }
        if failed { return [] }

        let access = accessModifier(of: structDecl)
        let conformance = protocols.isEmpty ? "" : ": " + protocols.map { $0.trimmedDescription }.joined(separator: ", ")
        let indent: ([String], String) -> String = { lines, pad in lines.map { pad + $0 }.joined(separator: "\n") }
        // A decoder that converts keys reads the type through init(from:); its values are copied one by one (a
        // `let` with an initial value rules out assigning `self`).
        let source: DeclSyntax = """
            extension \(type.trimmed)\(raw: conformance) {
                \(raw: access)nonisolated init(fields: inout TrawlJSON.JSONFields) throws {
                    // Keys as written; a decoder that converts keys reads the type as Decodable does.
                    if fields.convertsKeys {
                        \(raw: copies.isEmpty ? "_" : "let decoded") = try fields.decodeThroughDecodable(Self.self)
            \(raw: indent(copies, "            "))
                        return
                    }
            \(raw: indent(lines, "        "))
                }
            }
            """
        guard let extensionDecl = source.as(ExtensionDeclSyntax.self) else { return [] }
        return [extensionDecl]
    }

    /// The struct's own `init(from:)`, if it has one: the generated initializer could not read what it reads.
    private static func customInitializer(in decl: StructDeclSyntax) -> InitializerDeclSyntax? {
        for member in decl.memberBlock.members {
            guard let initializer = member.decl.as(InitializerDeclSyntax.self) else { continue }
            let parameters = initializer.signature.parameterClause.parameters
            if parameters.count == 1, let first = parameters.first, first.firstName.text == "from" {
                return initializer
            }
        }
        return nil
    }

    struct StoredProperty {
        /// The name as `CodingKeys` and the key use it (no backticks), and as it is written after `self.`.
        let name: String
        let spelling: String
        let isOptional: Bool
    }

    /// The stored instance properties that `Decodable` would decode, in declaration order.
    private static func storedProperties(
        of decl: StructDeclSyntax, in context: some MacroExpansionContext, failed: inout Bool
    ) -> [StoredProperty] {
        var properties: [StoredProperty] = []
        for member in decl.memberBlock.members {
            // Members under #if: which of them exist depends on the build, which the macro does not see.
            if let conditional = member.decl.as(IfConfigDeclSyntax.self) {
                context.diagnose(Diagnostic(node: conditional, message: FieldsMessage.conditionalMembers))
                failed = true
                continue
            }
            guard let variable = member.decl.as(VariableDeclSyntax.self) else { continue }
            let modifiers = Set(variable.modifiers.map(\.name.text))
            if modifiers.contains("lazy") {
                context.diagnose(Diagnostic(node: variable, message: FieldsMessage.lazyProperty))
                failed = true
                continue
            }
            if modifiers.contains("static") || modifiers.contains("class") { continue }
            if let wrapper = variable.attributes.first(where: isPropertyWrapper) {
                context.diagnose(Diagnostic(node: wrapper, message: FieldsMessage.propertyWrapper))
                failed = true
                continue
            }
            let isLet = variable.bindingSpecifier.tokenKind == .keyword(.let)
            let bindings = Array(variable.bindings)
            for (index, binding) in bindings.enumerated() {
                guard let pattern = binding.pattern.as(IdentifierPatternSyntax.self) else {
                    context.diagnose(Diagnostic(node: binding.pattern, message: FieldsMessage.pattern))
                    failed = true
                    continue
                }
                if let accessors = binding.accessorBlock, isComputed(accessors) { continue }
                // `let x = 1` keeps its value (Decodable cannot overwrite it); `var x = 1` is decoded.
                if isLet && binding.initializer != nil { continue }
                // `let a, b: Int`: a binding with neither a type nor a value takes the next one's type.
                let type = binding.typeAnnotation?.type ?? (binding.initializer != nil ? nil
                    : bindings[index...].lazy.compactMap { $0.typeAnnotation?.type }.first)
                properties.append(StoredProperty(
                    name: pattern.identifier.identifier?.name ?? pattern.identifier.text,
                    spelling: pattern.identifier.text, isOptional: type.map(isOptional) ?? false))
            }
        }
        return properties
    }

    /// Attributes a stored property may carry that are not property wrappers.
    private static let plainAttributes: Set<String> = [
        "available", "usableFromInline", "preconcurrency", "MainActor", "_spi", "nonisolated", "objc",
        "_documentation", "backDeployed",
    ]

    private static func isPropertyWrapper(_ element: AttributeListSyntax.Element) -> Bool {
        guard case .attribute(let attribute) = element else { return true }  // #if inside attributes: refuse
        let name = attribute.attributeName.trimmedDescription
        return !plainAttributes.contains(name)
    }

    /// Whether an accessor block makes the property computed (a getter) rather than observed (`willSet`/`didSet`).
    private static func isComputed(_ block: AccessorBlockSyntax) -> Bool {
        switch block.accessors {
        case .getter:
            return true
        case .accessors(let accessors):
            return accessors.contains { !["willSet", "didSet"].contains($0.accessorSpecifier.text) }
        }
    }

    /// `T?`, `T!`, `Optional<T>` and `Swift.Optional<T>`: read with `decodeIfPresent`, as `Decodable` does.
    private static func isOptional(_ type: TypeSyntax) -> Bool {
        if type.is(OptionalTypeSyntax.self) || type.is(ImplicitlyUnwrappedOptionalTypeSyntax.self) { return true }
        if let identifier = type.as(IdentifierTypeSyntax.self) {
            return identifier.name.text == "Optional" && identifier.genericArgumentClause != nil
        }
        if let member = type.as(MemberTypeSyntax.self) {
            return member.name.text == "Optional" && member.baseType.trimmedDescription == "Swift"
                && member.genericArgumentClause != nil
        }
        if let attributed = type.as(AttributedTypeSyntax.self) { return isOptional(attributed.baseType) }
        return false
    }

    /// `public`, `package` or nothing: the initializer is as visible as the type (a `public` type's conformance
    /// needs a `public` initializer). It is `nonisolated` too, as the compiler's `init(from:)` is: a struct isolated
    /// to a global actor (`@MainActor`) still conforms without crossing into its actor.
    private static func accessModifier(of decl: StructDeclSyntax) -> String {
        for modifier in decl.modifiers {
            switch modifier.name.text {
            case "public", "open": return "public "
            case "package": return "package "
            default: continue
            }
        }
        return ""
    }

    /// A one-line Swift string literal of `text`: `\\`, `"` and control characters escaped.
    static func stringLiteral(_ text: String) -> String {
        var literal = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": literal += "\\\\"
            case "\"": literal += "\\\""
            case _ where scalar.value < 0x20 || scalar.value == 0x7F:
                literal += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: literal.unicodeScalars.append(scalar)
            }
        }
        return literal + "\""
    }
}

/// The keys a `CodingKeys` enum declared in the type gives its properties: a case's string raw value as written,
/// or else its name.
struct CodingKeysTable {
    let keys: [String: String]

    init?(_ decl: StructDeclSyntax) {
        guard let codingKeys = decl.memberBlock.members.lazy.compactMap({ $0.decl.as(EnumDeclSyntax.self) })
            .first(where: { $0.name.text == "CodingKeys" })
        else { return nil }
        let stringBacked = codingKeys.inheritanceClause?.inheritedTypes.contains {
            ["String", "Swift.String"].contains($0.type.trimmedDescription)
        } ?? false
        var keys: [String: String] = [:]
        for member in codingKeys.memberBlock.members {
            guard let cases = member.decl.as(EnumCaseDeclSyntax.self) else { continue }
            for element in cases.elements {
                let name = element.name.identifier?.name ?? element.name.text
                if stringBacked, let literal = element.rawValue?.value.as(StringLiteralExprSyntax.self),
                    let value = literal.representedLiteralValue
                {
                    keys[name] = JSONFieldsDecodableMacro.stringLiteral(value)
                } else {
                    keys[name] = JSONFieldsDecodableMacro.stringLiteral(name)
                }
            }
        }
        self.keys = keys
    }
}

enum FieldsMessage: String, DiagnosticMessage {
    case notAStruct
    case hasInitFromDecoder
    case lazyProperty
    case propertyWrapper
    case pattern
    case conditionalMembers

    var message: String {
        switch self {
        case .notAStruct:
            "@JSONFieldsDecodable applies to a struct; for a class or an enum, conform to JSONFieldsDecodable and write init(fields:)"
        case .hasInitFromDecoder:
            "@JSONFieldsDecodable would not read what this init(from:) reads; remove the attribute, or conform to JSONFieldsDecodable and write init(fields:)"
        case .lazyProperty:
            "@JSONFieldsDecodable cannot decode a lazy property; make it a stored or computed property"
        case .propertyWrapper:
            "@JSONFieldsDecodable does not support property wrappers; conform to JSONFieldsDecodable and write init(fields:)"
        case .pattern:
            "@JSONFieldsDecodable needs one name per stored property (no tuple patterns)"
        case .conditionalMembers:
            "@JSONFieldsDecodable cannot see which members an #if keeps; move them out of the #if, or write init(fields:)"
        }
    }

    var diagnosticID: MessageID { MessageID(domain: "TrawlMacros", id: rawValue) }
    var severity: DiagnosticSeverity { .error }
}

@main
struct TrawlMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [JSONFieldsDecodableMacro.self]
}
#else
@main
struct TrawlMacrosPlugin {
    static func main() {}
}
#endif
