import BackupKit
import Testing

/// What a read must end in.
enum Expected: Sendable {
    case syntax(line: Int, column: Int, containing: String)
    case notABackup
    case newerSchema(Int)
    case invalid([String])
}

struct ReaderCase: Sendable, CustomTestStringConvertible {
    var name: String
    var bytes: [UInt8]
    var expected: Expected
    var testDescription: String { name }

    init(_ name: String, _ text: String, _ expected: Expected) {
        self.init(name, Array(text.utf8), expected)
    }

    init(_ name: String, _ bytes: [UInt8], _ expected: Expected) {
        self.name = name
        self.bytes = bytes
        self.expected = expected
    }
}

/// `levels` nested arrays as the value of an unknown member of an otherwise empty object.
private func nested(_ levels: Int) -> String {
    #"{"x":"# + String(repeating: "[", count: levels) + String(repeating: "]", count: levels) + "}"
}

let readerCases: [ReaderCase] = [
    ReaderCase("empty file", "", .syntax(line: 1, column: 1, containing: "empty")),
    ReaderCase(
        "BOM", [0xEF, 0xBB, 0xBF] + Array("{}".utf8),
        .syntax(line: 1, column: 1, containing: "byte order mark")),
    ReaderCase(
        "UTF-16 LE", [0xFF, 0xFE, 0x7B, 0x00, 0x7D, 0x00],
        .syntax(line: 1, column: 1, containing: "UTF-16")),
    ReaderCase(
        "UTF-16 without BOM", [0x7B, 0x00, 0x7D, 0x00],
        .syntax(line: 1, column: 1, containing: "UTF-16")),
    ReaderCase(
        "invalid UTF-8 in a string", [0x7B, 0x22, 0xC0, 0x80, 0x22, 0x3A, 0x31, 0x7D],
        .syntax(line: 1, column: 3, containing: "UTF-8")),
    ReaderCase(
        "a binary byte below 0x10", Array(#"{"a":"#.utf8) + [0x0C, 0x7D],
        .syntax(line: 1, column: 6, containing: "expected a value, found byte 0x0c")),
    ReaderCase(
        "UTF-8 surrogate bytes", [0x7B, 0x22, 0xED, 0xA0, 0x80, 0x22, 0x3A, 0x31, 0x7D],
        .syntax(line: 1, column: 3, containing: "UTF-8")),
    ReaderCase(
        "trailing comma in an object", #"{"a":1,}"#,
        .syntax(line: 1, column: 8, containing: "trailing comma")),
    ReaderCase(
        "trailing comma in an array", #"{"a":[1,]}"#,
        .syntax(line: 1, column: 9, containing: "trailing comma")),
    ReaderCase("NaN", #"{"a":NaN}"#, .syntax(line: 1, column: 6, containing: "NaN")),
    ReaderCase(
        "Infinity", #"{"a":-Infinity}"#, .syntax(line: 1, column: 7, containing: "Infinity")),
    ReaderCase(
        "leading zero", #"{"a":01}"#, .syntax(line: 1, column: 6, containing: "leading zero")),
    ReaderCase(
        "negative leading zero", #"{"a":-01}"#,
        .syntax(line: 1, column: 6, containing: "leading zero")),
    ReaderCase(
        "bare decimal point", #"{"a":1.}"#, .syntax(line: 1, column: 8, containing: "digit")),
    ReaderCase(
        "lone high surrogate", #"{"a":"\ud800"}"#,
        .syntax(line: 1, column: 7, containing: "lone surrogate")),
    ReaderCase(
        "lone low surrogate", #"{"a":"\udc00x"}"#,
        .syntax(line: 1, column: 7, containing: "lone surrogate")),
    ReaderCase(
        "high surrogate then letter", #"{"a":"\ud800\u0041"}"#,
        .syntax(line: 1, column: 7, containing: "lone surrogate")),
    ReaderCase("comment", "{\"a\":1 // no\n}", .syntax(line: 1, column: 8, containing: "comments")),
    ReaderCase(
        "single quotes", "{'a':1}", .syntax(line: 1, column: 2, containing: "double quotes")),
    ReaderCase(
        "raw control character", "{\"a\":\"x\ty\"}",
        .syntax(line: 1, column: 8, containing: "control character")),
    ReaderCase("bad escape", #"{"a":"\x"}"#, .syntax(line: 1, column: 7, containing: "escape")),
    ReaderCase("two values", "{}\n{}", .syntax(line: 2, column: 1, containing: "end of the file")),
    ReaderCase(
        "line and column", "{\n  \"a\": 1,\n  \"b\" 2\n}",
        .syntax(line: 3, column: 7, containing: "':'")),
    ReaderCase("truncated", #"{"a":[1,2"#, .syntax(line: 1, column: 10, containing: "truncated")),
    ReaderCase("depth 32", nested(31), .notABackup),
    ReaderCase(
        "depth 33", nested(32), .syntax(line: 1, column: 37, containing: "nesting deeper than 32")),
    ReaderCase("other JSON object", #"{"foo":1}"#, .notABackup),
    ReaderCase("JSON array", "[1,2]", .notABackup),
    ReaderCase("JSON string", #""habit-backup""#, .notABackup),
    ReaderCase("other format", #"{"format":"photo-album","version":3}"#, .notABackup),
    ReaderCase("newer schema", #"{"format":"habit-backup","schemaVersion":5}"#, .newerSchema(5)),
    ReaderCase(
        "newer schema late", #"{"challenges":{},"format":"habit-backup","schemaVersion":12,"x":1}"#,
        .newerSchema(12)),
    ReaderCase(
        "backup with nothing but its format", #"{"format":"habit-backup"}"#,
        .invalid([
            "/schemaVersion", "/exportedAt", "/deviceId", "/settings", "/challenges", "/dayLogs",
            "/tombstones",
        ])),
    ReaderCase(
        "duplicate top-level key, and the rest still reported",
        #"{"format":"habit-backup","format":"habit-backup","schemaVersion":3}"#,
        .invalid([
            "/format", "/exportedAt", "/deviceId", "/settings", "/challenges", "/dayLogs",
            "/tombstones",
        ])),
]

@Suite struct ReaderRuleTests {
    @Test(arguments: readerCases)
    func rule(_ test: ReaderCase) {
        do {
            _ = try BackupReader.read(test.bytes)
            Issue.record("read succeeded")
        } catch {
            switch (error, test.expected) {
            case (
                .syntax(let line, let column, let message),
                .syntax(let wantLine, let wantColumn, let fragment)
            ):
                #expect(
                    line == wantLine && column == wantColumn, "at \(line):\(column): \(message)")
                #expect(message.contains(fragment), "\(message)")
            case (.notABackup(let message), .notABackup):
                #expect(message.hasPrefix("not a habit backup"))
            case (.newerSchema(let version), .newerSchema(let want)):
                #expect(version == want)
            case (.invalid(let issues), .invalid(let pointers)):
                #expect(issues.map(\.pointer) == pointers)
            default:
                Issue.record("got \(error)")
            }
        }
    }

    @Test func duplicateKeysAtEveryLevelAreReportedAtTheDuplicate() throws {
        let challengeID = "0193a5b2-0001-7000-8000-000000000001"
        let logKey = challengeID + "/2026-03-08"
        let text = try Edit(
            "duplicates",
            [
                (
                    #""dayLogs": {"#,
                    "\"dayLogs\": {\"\(logKey)\": {\"values\": {}, \"note\": \"\", \"mood\": null, \"updatedAt\": \"2026-03-09T06:40:00.000Z\"},"
                ),
                (
                    #""tombstones": {"#,
                    #""tombstones": { "0193a5b2-0001-7000-8000-0000000000ff": { "deletedAt": "2026-03-03T14:02:00.000Z" },"#
                ),
                (#""mood": 4,"#, #""mood": 4, "mood": 4,"#),
            ]
        ).apply(to: exampleText())
        #expect(
            try reportedPointers(text).get() == [
                "/dayLogs/\(challengeID)~12026-03-08/mood", "/dayLogs/\(challengeID)~12026-03-08",
                "/tombstones/0193a5b2-0001-7000-8000-0000000000ff",
            ])
    }

    @Test func sizeLimitRefusesBeforeParsing() {
        let bytes = Array(#"{"not json at all"#.utf8)
        #expect(throws: BackupFileError.tooLarge(size: bytes.count, limit: 10)) {
            try BackupReader.read(bytes, options: ReadOptions(maxBytes: 10))
        }
    }

    @Test func escapedKeysAndValuesDecode() throws {
        let text = try Edit(
            "escapes", #""title": "Drink water""#,
            #""ti\u0074le": "Drink \"water\" \u00e9\ud83d\ude00 a\/b""#
        )
        .apply(to: exampleText())
        let document = try BackupReader.read(Array(text.utf8)).document
        #expect(document.challenges.first?.tasks.first?.title == "Drink \"water\" é😀 a/b")
    }

    /// Strings are scanned eight bytes at a time: a special byte at any offset of a long
    /// string must still be seen.
    @Test(arguments: 0..<20)
    func specialBytesAreFoundAtEveryOffset(offset: Int) throws {
        let padding = String(repeating: "a", count: offset)
        let tail = String(repeating: "b", count: 12)
        let decoded: [(raw: String, title: String)] = [
            (#"\""#, "\""), (#"\\"#, "\\"), ("é", "é"), ("😀", "😀"), (#"\u0041"#, "A"),
        ]
        for (raw, title) in decoded {
            let text = try Edit("title", #""Drink water""#, "\"\(padding)\(raw)\(tail)\"").apply(
                to: exampleText())
            let document = try BackupReader.read(Array(text.utf8)).document
            #expect(document.challenges.first?.tasks.first?.title == padding + title + tail)
        }
        let control = try Edit("title", #""Drink water""#, "\"\(padding)\u{01}\(tail)\"").apply(
            to: exampleText())
        #expect {
            try BackupReader.read(Array(control.utf8))
        } throws: { error in
            guard case .syntax(_, _, let message) = error as? BackupFileError else { return false }
            return message.contains("control character")
        }
    }

    @Test func truncationAtEveryOffsetIsAnErrorNeverACrash() throws {
        let bytes = try fixture("v3-example.json")
        let end = try #require(bytes.lastIndex(of: UInt8(ascii: "}")))
        var errors = 0
        for length in 0...end {
            do {
                _ = try BackupReader.read(Array(bytes[..<length]))
            } catch {
                errors += 1
            }
        }
        #expect(errors == end + 1)
    }
}
