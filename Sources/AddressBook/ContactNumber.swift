import FoundationEssentials
import PhoneNumber
import ScreenText

/// Phone numbers from address books, read as E.164 (`Int64`, country code and digits,
/// as `PhoneNumber.normalize` gives them), so that a contact's `020 7946 0000` and
/// an incoming `+44 20 7946 0000` are one key.
///
/// The project's `PhoneNumber` reads `+…`, `tel:` and digits as written; a national
/// number (trunk prefix `0`, or a US/Canadian 10-digit number) it leaves without a
/// country. Address books are full of those, so here they take the user's country,
/// as libphonenumber does in EDS (`e_phone_number_get_default_region`: the locale's
/// country, `LC_ADDRESS`). `00` (the international access code of most countries) is
/// read as `+`.
public struct ContactNumbering: Sendable, Hashable {
    /// ISO 3166 alpha-2, upper case ("GB"); nil when the locale names no country.
    public let region: String?
    private let callingCode: String?
    private let trunkPrefix: String?

    public init(region: String?) {
        let region = region?.uppercased()
        self.region = region
        let plan = region.flatMap { Self.plans[$0] }
        callingCode = plan?.code
        trunkPrefix = plan?.trunk
    }

    /// The locale's country: `LC_ALL`, else `LC_ADDRESS`, else `LANG` (`en_GB.UTF-8` → GB).
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> ContactNumbering {
        for name in ["LC_ALL", "LC_ADDRESS", "LANG"] {
            guard let value = environment[name], !value.isEmpty else { continue }
            return ContactNumbering(region: region(ofLocale: value))
        }
        return ContactNumbering(region: nil)
    }

    /// `en_GB.UTF-8@euro` → GB; `C`, `POSIX` → nil.
    static func region(ofLocale locale: String) -> String? {
        let base = locale.split(whereSeparator: { $0 == "." || $0 == "@" }).first ?? ""
        let parts = base.split(separator: "_")
        guard parts.count >= 2, parts[1].count == 2, parts[1].allSatisfy(\.isLetter) else { return nil }
        return parts[1].uppercased()
    }

    /// The number's E.164 form, or nil when it is no phone number or cannot be placed in a country.
    public func e164(_ written: String) -> Int64? {
        guard let parsed = PhoneNumber.parse(written) else { return nil }
        let hasPlus = written.unicodeScalars.contains { $0 == "+" || $0 == "\u{FF0B}" || $0 == "\u{FE62}" }
        var digits = Substring(parsed.digits)
        if !hasPlus {
            if digits.hasPrefix("00") {
                digits = digits.dropFirst(2)
            } else if let trunkPrefix, let callingCode, digits.hasPrefix(trunkPrefix), digits.count > trunkPrefix.count + 3 {
                digits = Substring(callingCode + digits.dropFirst(trunkPrefix.count))
            } else if callingCode == "1", digits.count == 10, digits.first != "1" {
                digits = Substring("1" + digits) // NANP: 408 555 5555
            } else if let callingCode, trunkPrefix == nil, !digits.hasPrefix(callingCode) {
                // No trunk prefix (Italy keeps its 0, Spain has none): national unless it starts with the country's code.
                digits = Substring(callingCode + digits)
            }
        }
        return PhoneNumber.number(digits: digits)
    }

    /// The international digits (country code first, no `+`) that a number being typed starts
    /// with, when its country is known: written with `+` or `00`, or nationally with the country's
    /// trunk prefix (`020 79` → `4420 79` in GB; a US `408 555` → `1408555`). Nil when it cannot
    /// be placed (no country, or digits that could be any part of a number). Only the digits of
    /// `written` count; it need not be a whole number.
    public func internationalPrefix(_ written: String) -> String? {
        var digits = Substring(String(written.unicodeScalars.compactMap { scalar -> Character? in
            guard let value = scalar.properties.numericType == .decimal ? scalar.properties.numericValue : nil else { return nil }
            return Character(String(Int(value)))
        }))
        guard !digits.isEmpty else { return nil }
        let trimmed = written.drop { $0 == " " || $0 == "(" }
        if trimmed.first == "+" || trimmed.first == "\u{FF0B}" { return String(digits) }
        if digits.hasPrefix("00") {
            digits = digits.dropFirst(2)
            return digits.isEmpty ? nil : String(digits)
        }
        guard let callingCode else { return nil }
        if let trunkPrefix, digits.hasPrefix(trunkPrefix), digits.count > trunkPrefix.count {
            return callingCode + digits.dropFirst(trunkPrefix.count)
        }
        if callingCode == "1", digits.first != "1", digits.count >= 3 { return "1" + digits } // NANP: 408 555
        // No trunk prefix (Italy keeps its 0): national unless it starts with the country's code.
        if trunkPrefix == nil, !digits.hasPrefix(callingCode) { return callingCode + digits }
        return nil
    }

    /// Calling codes and trunk prefixes (nil: the leading 0 is part of the number, as in Italy).
    private static let plans: [String: (code: String, trunk: String?)] = {
        var plans: [String: (String, String?)] = [:]
        // Trunk prefix 0.
        for (region, code) in [
            ("GB", "44"), ("IE", "353"), ("DE", "49"), ("AT", "43"), ("CH", "41"), ("FR", "33"), ("BE", "32"),
            ("NL", "31"), ("LU", "352"), ("SE", "46"), ("FI", "358"), ("PT", "351"), ("PL", "48"),
            ("CZ", "420"), ("SK", "421"), ("SI", "386"), ("HR", "385"), ("RS", "381"), ("BA", "387"), ("RO", "40"),
            ("BG", "359"), ("TR", "90"), ("UA", "380"), ("IL", "972"), ("EG", "20"), ("ZA", "27"), ("NG", "234"),
            ("KE", "254"), ("IN", "91"), ("PK", "92"), ("BD", "880"), ("LK", "94"), ("CN", "86"), ("JP", "81"),
            ("KR", "82"), ("TW", "886"), ("TH", "66"), ("VN", "84"), ("ID", "62"), ("MY", "60"), ("PH", "63"),
            ("AU", "61"), ("NZ", "64"), ("AR", "54"), ("BR", "55"), ("PE", "51"), ("CL", "56"), ("CO", "57"),
            ("VE", "58"), ("IR", "98"), ("SA", "966"), ("AE", "971"), ("MA", "212"), ("DZ", "213"), ("TN", "216"),
            ("EE", "372"), ("LV", "371"), ("LT", "370"), ("IS", "354"), ("MT", "356"), ("CY", "357"), ("AL", "355"),
            ("MK", "389"), ("ME", "382"), ("MD", "373"), ("GE", "995"), ("AM", "374"), ("AZ", "994"),
        ] { plans[region] = (code, "0") }
        // No trunk prefix: a leading 0 stays part of the number.
        for (region, code) in [("IT", "39"), ("SM", "378"), ("VA", "39"), ("ES", "34"), ("DK", "45"), ("NO", "47"),
                               ("GR", "30"), ("SG", "65"), ("HK", "852"), ("MX", "52")] {
            plans[region] = (code, nil)
        }
        for region in ["US", "CA", "PR", "JM", "TT", "BS", "BB", "DO"] { plans[region] = ("1", "1") }
        plans["RU"] = ("7", "8")
        plans["KZ"] = ("7", "8")
        plans["BY"] = ("375", "8")
        plans["HU"] = ("36", "06")
        return plans
    }()
}

extension ContactPhone {
    /// The label of a number from its vCard `TYPE`s (`CELL`, `HOME,VOICE`, vCard 2.1's bare
    /// `CELL`, EDS's `X-EVOLUTION-COMPANY`…), in any letter case: "mobile", "home", "work",
    /// "main", "fax", "pager", "car", "other", or "" when they say none of these. A key for the
    /// app to show in the user's language, not text to show as it is.
    public static func label<S: Sequence>(types: S) -> String where S.Element: StringProtocol {
        let all = Set(types.flatMap { $0.split(separator: ",") }.map { $0.trimmingWhitespace().uppercased() })
        if all.contains("FAX") { return "fax" }
        if all.contains("PAGER") { return "pager" }
        if !all.isDisjoint(with: ["CELL", "MOBILE", "IPHONE", "TEXTPHONE"]) { return "mobile" }
        if all.contains("CAR") { return "car" }
        if !all.isDisjoint(with: ["MAIN", "PREF-MAIN", "X-EVOLUTION-COMPANY", "COMPANY"]) { return "main" }
        if all.contains("WORK") { return "work" }
        if all.contains("HOME") { return "home" }
        if !all.isDisjoint(with: ["OTHER", "X-EVOLUTION-OTHER"]) { return "other" }
        return ""
    }
}
