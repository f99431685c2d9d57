import Foundation

/// Schema-directed decoding on top of `JSONScanner`: each part of the document is read by
/// a function that knows its fields, straight into the typed model.
///
/// Problems the typed model cannot hold (a wrong type, a bad timestamp, a missing or
/// unknown field, a duplicate key) are recorded with their JSON Pointer and decoding goes
/// on, so one run reports them all. A value that failed comes back nil, which makes its
/// item (a challenge, a day log…) "broken": it is left out of the document, and the value
/// rules of `BackupValidator` then run on the intact items only. Syntax errors end the
/// read at once (`ScanError`).
///
/// The current place is a stack of path components that point back into the input, so a
/// pointer string is only built when an issue is reported.
final class DocumentDecoder {
    enum Component: Sendable {
        case key(JSONString)
        case name(StaticString)
        case index(Int)
    }

    let scanner: JSONScanner
    @exclusivity(unchecked) var issues: IssueList
    @exclusivity(unchecked) private(set) var path: [Component]
    /// Inputs with at least this many bytes from the day logs on may have them decoded on
    /// two cores (when a canonical boundary is found past the middle).
    let splitFromBytes: Int
    /// Whether every day log `dayLogs()` kept came the canonical way, which admits only
    /// values, moods and notes within their ranges: then their own rules need no second look
    /// (`BackupValidator.DayLogPasses.ownRulesHeld`).
    @exclusivity(unchecked) var dayLogsHoldOwnRules = false
    /// Scratch for a day log's values (see `values()`).
    @exclusivity(unchecked) var valueBuffer: [TaskValue] = []
    /// The last few task ids read, with where their bytes are in the input (see
    /// `recentIdentifier(_:)`).
    @exclusivity(unchecked) private var recentIDs: [Identifier] = []
    @exclusivity(unchecked) private var recentIDBytes: [(start: Int, count: Int)] = []
    @exclusivity(unchecked) private var nextRecent = 0
    private static let recentCapacity = 8

    init(
        scanner: JSONScanner, maxIssues: Int, path: [Component] = [], splitFromBytes: Int = .max
    ) {
        self.scanner = scanner
        self.issues = IssueList(limit: maxIssues)
        self.path = path
        self.splitFromBytes = splitFromBytes
        self.path.reserveCapacity(16)
    }

    // MARK: Place and issues

    var pointer: String {
        var result = ""
        for component in path {
            result += "/"
            switch component {
            case .key(let token): result += Pointer.escape(scanner.decodeAgain(token))
            case .name(let name): result += name.description
            case .index(let index): result += String(index)
            }
        }
        return result
    }

    /// Reports at the current place that `rule` is broken.
    func report(_ rule: FormatRule, _ message: @autoclosure () -> String) {
        issues.add(rule, pointer, message())
    }

    /// Reports at a child of the current place (e.g. a missing field).
    func report(_ rule: FormatRule, _ message: @autoclosure () -> String, at child: Component) {
        path.append(child)
        issues.add(rule, pointer, message())
        path.removeLast()
    }

    @inline(__always)
    func within<T>(_ component: Component, _ body: () throws(ScanError) -> T) throws(ScanError) -> T
    {
        path.append(component)
        defer { path.removeLast() }
        return try body()
    }

    /// Reports a value of the wrong kind and steps over it: what a field may hold is FORMAT.md
    /// §1.2's (the older versions' shapes hold the same kinds of values).
    func wrongType(_ expected: String) throws(ScanError) {
        report(.fields, "must be \(expected)")
        try scanner.skipValue()
    }

    // MARK: Containers

    /// An object whose fields are `Field`'s, of which it may hold those in `known` (nil: all of
    /// them); `decode` gets each present field. Unknown fields and duplicates are reported and
    /// skipped; missing `required` fields are reported in `Field`'s order. Returns false when
    /// the value was not an object or a required field was missing.
    // Inlined into each kind's reader, so that its `decode` is no closure with a context:
    // called through one, each field cost a retain and a release, some 3% of reading day logs
    // that are not canonical. `known` is optional because `.all` as its default fetched
    // `Field.names` for every object: 0.7% more.
    @inline(__always)
    func object<Field: ObjectField>(
        _ known: FieldSet<Field>? = nil, required: FieldSet<Field>,
        _ decode: (Field) throws(ScanError) -> Void
    ) throws(ScanError) -> Bool {
        guard scanner.peek() == UInt8(ascii: "{") else {
            try wrongType("an object")
            return false
        }
        var seen = FieldSet<Field>()
        if try scanner.openObject() {
            repeat {
                let key = try scanner.key()
                try within(.key(key)) { () throws(ScanError) in
                    guard let field = Field.named(key, in: scanner), known?.contains(field) ?? true
                    else {
                        report(.unknownFields, "unknown field")
                        try scanner.skipValue()
                        return
                    }
                    guard seen.insert(field) else {
                        report(.duplicateKeys, "duplicate key")
                        try scanner.skipValue()
                        return
                    }
                    try decode(field)
                }
            } while try scanner.nextMember()
        }
        let missing = required.subtracting(seen)
        guard !missing.isEmpty else { return true }
        for field in Field.allCases where missing.contains(field) {
            report(.requiredFields, "is required", at: .name(field.name))
        }
        return false
    }

    /// An object used as a map: `decode` gets each key with the position at its value.
    /// Returns false when the value was not an object.
    func map(_ decode: (JSONString) throws(ScanError) -> Void) throws(ScanError) -> Bool {
        guard scanner.peek() == UInt8(ascii: "{") else {
            try wrongType("an object")
            return false
        }
        guard try scanner.openObject() else { return true }
        repeat {
            let key = try scanner.key()
            try within(.key(key)) { () throws(ScanError) in try decode(key) }
        } while try scanner.nextMember()
        return true
    }

    /// An array: `decode` gets each element's index. Returns false when not an array.
    func array(_ decode: (Int) throws(ScanError) -> Void) throws(ScanError) -> Bool {
        guard scanner.peek() == UInt8(ascii: "[") else {
            try wrongType("an array")
            return false
        }
        guard try scanner.openArray() else { return true }
        var index = 0
        repeat {
            try within(.index(index)) { () throws(ScanError) in try decode(index) }
            index += 1
        } while try scanner.nextElement()
        return true
    }

    /// Sorts `items` (stably) unless they already are, and drops duplicates after the first,
    /// reporting each at its pointer.
    func sortAndDropDuplicates<Item>(
        _ items: inout [Item], by less: (Item, Item) -> Bool, pointer: (Item) -> String
    ) {
        items.sortDroppingDuplicates(by: less) { duplicateKey(at: pointer($0)) }
    }

    /// A key met twice in one object: the later is dropped.
    func duplicateKey(at pointer: String) {
        issues.add(.duplicateKeys, pointer, "duplicate key")
    }

    // MARK: Scalars

    func string() throws(ScanError) -> String? {
        guard scanner.peek() == UInt8(ascii: "\"") else {
            try wrongType("a string")
            return nil
        }
        return scanner.makeString(try scanner.string())
    }

    /// A string; nil (after reporting) when the value is not one.
    func stringToken(_ expected: @autoclosure () -> String) throws(ScanError) -> JSONString? {
        guard scanner.peek() == UInt8(ascii: "\"") else {
            try wrongType(expected())
            return nil
        }
        return try scanner.string()
    }

    func integer() throws(ScanError) -> Int? {
        switch scanner.peek() {
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            guard let value = try scanner.number() else {
                report(.numbers, "must be an integer (it has a fraction)")
                return nil
            }
            return value
        default:
            try wrongType("an integer")
            return nil
        }
    }

    func bool() throws(ScanError) -> Bool? {
        switch scanner.peek() {
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            return try scanner.literal() == .true
        default:
            try wrongType("true or false")
            return nil
        }
    }

    /// Consumes a `null` if one is next.
    func null() throws(ScanError) -> Bool {
        guard scanner.peek() == UInt8(ascii: "n") else { return false }
        _ = try scanner.literal()
        return true
    }

    static let timestampHelp = "a UTC timestamp like 2026-11-29T22:14:03.120Z (years 2000…9999)"
    static let dayKeyHelp = "a real date YYYY-MM-DD (years 2000…2199)"
    static let idHelp = "1…64 characters of A-Z a-z 0-9 - _"

    func timestamp() throws(ScanError) -> Timestamp? {
        guard let token = try stringToken(Self.timestampHelp) else { return nil }
        guard let value = scanner.withBytes(token, { Timestamp(utf8: $0) }) else {
            report(.timestamps, "must be \(Self.timestampHelp)")
            return nil
        }
        return value
    }

    func dayKey() throws(ScanError) -> DayKey? {
        guard let token = try stringToken(Self.dayKeyHelp) else { return nil }
        guard let value = scanner.withBytes(token, { DayKey(utf8: $0) }) else {
            report(.fields, "must be \(Self.dayKeyHelp)")
            return nil
        }
        return value
    }

    /// An id from a string value.
    func identifier() throws(ScanError) -> Identifier? {
        guard let token = try stringToken("an id (\(Self.idHelp))") else { return nil }
        return identifier(token)
    }

    /// An id from a token already read (a map key or a string value).
    func identifier(_ token: JSONString) -> Identifier? {
        guard scanner.withBytes(token, { Identifier.isValid($0) }) else {
            report(.fields, "must be an id: \(Self.idHelp)")
            return nil
        }
        return Identifier(unchecked: scanner.makeString(token))
    }

    /// `identifier(_:)` for ids that repeat from item to item, like the task ids of day
    /// logs (see `rememberedIdentifier(_:)`).
    func recentIdentifier(_ token: JSONString) -> Identifier? {
        guard !token.escaped else { return identifier(token) }
        guard let id = rememberedIdentifier(token) else {
            report(.fields, "must be an id: \(Self.idHelp)")
            return nil
        }
        return id
    }

    /// The id of an unescaped token, or nil when it is not a valid id (nothing reported): an
    /// id whose bytes equal one of the last few read is that same id, so it is neither
    /// checked nor made into a String again.
    func rememberedIdentifier(_ token: JSONString) -> Identifier? {
        let count = token.end - token.start
        let bytes = scanner.base + token.start
        for index in recentIDBytes.indices where recentIDBytes[index].count == count {
            if memcmp(scanner.base + recentIDBytes[index].start, bytes, count) == 0 {
                return recentIDs[index]
            }
        }
        let buffer = UnsafeBufferPointer(start: bytes, count: count)
        guard Identifier.isValid(buffer) else { return nil }
        let id = Identifier(unchecked: String(decoding: buffer, as: UTF8.self))
        if recentIDs.count < Self.recentCapacity {
            recentIDs.append(id)
            recentIDBytes.append((token.start, count))
        } else {
            recentIDs[nextRecent] = id
            recentIDBytes[nextRecent] = (token.start, count)
            nextRecent = (nextRecent + 1) % Self.recentCapacity
        }
        return id
    }

    /// At a `"`: when one of the last few ids read follows, quoted, its token and the id, with
    /// the position past the closing quote; nil (the position untouched) otherwise. The bytes
    /// equal an id's that was checked when first read, so they need no scan of their own.
    func recentKey() -> (JSONString, Identifier)? {
        let start = scanner.position + 1
        for index in recentIDBytes.indices {
            let (known, count) = recentIDBytes[index]
            guard start + count < scanner.count,
                scanner.base[start + count] == UInt8(ascii: "\""),
                memcmp(scanner.base + start, scanner.base + known, count) == 0
            else { continue }
            scanner.position = start + count + 1
            return (JSONString(start: start, end: start + count, escaped: false), recentIDs[index])
        }
        return nil
    }

    /// One of an enumeration's raw values.
    func choice<Choice: CaseIterable & RawRepresentable<String>>(_: Choice.Type) throws(ScanError)
        -> Choice?
    {
        // Only a failure spells out the choices.
        func names() -> String {
            Choice.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
        }
        guard let token = try stringToken("one of \(names())") else { return nil }
        let value = scanner.withBytes(token) { bytes in
            Choice.allCases.first { $0.rawValue.utf8.elementsEqual(bytes) }
        }
        guard let value else {
            report(.fields, "must be one of \(names())")
            return nil
        }
        return value
    }
}
