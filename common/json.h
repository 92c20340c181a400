// json.h - the workbook's JSON writer. Each function returns one value as JSON text, so a document is
// built from the inside out. A value that was not measured is NaN in a program and null in the file.
#pragma once

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace wb::json {

// One member of an object, "key": value, the value already JSON text. A program that shows the same
// members on the screen may add a note there; the file never holds it.
struct Line {
    std::string key, value, note = {};
};

inline std::string boolean(bool v) { return v ? "true" : "false"; }
inline std::string number(double v) {  // whole numbers exactly (byte counts), others to 7 digits; NaN: null
    char s[32];
    std::snprintf(s, sizeof s, v == std::nearbyint(v) && std::fabs(v) < 9e15 ? "%.0f" : "%.7g", v);
    return std::isfinite(v) ? s : "null";
}
inline std::string text(const std::string& s) {  // control characters as \u00XX; UTF-8 passes unchanged
    const char* const hex = "0123456789abcdef";
    std::string out = "\"";
    for (const unsigned char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c < 0x20 ? std::string("\\u00") + hex[c >> 4] + hex[c & 15] : std::string(1, char(c));
    }
    return out + "\"";
}
inline std::string text_or_null(const std::string& s) { return s.empty() ? "null" : text(s); }

// A short array of plain values stays on one line, [1024, 1024, 64]; anything else gets one item per
// line, indented one step deeper than its container.
inline std::string array(const std::vector<std::string>& items, char open = '[', char close = ']') {
    std::string line, lines;
    for (const std::string& v : items) {
        line += (line.empty() ? "" : ", ") + v;
        lines += lines.empty() ? "\n  " : ",\n  ";
        for (const char c : v) lines += c == '\n' ? std::string("\n  ") : std::string(1, c);
    }
    const bool one_line = open == '[' && line.size() < 80 && line.find_first_of("{\n") == std::string::npos;
    return one_line ? open + line + close : open + lines + (items.empty() ? "" : "\n") + close;
}
inline std::string texts(std::vector<std::string> items) {  // an array of strings
    for (std::string& s : items) s = text(s);
    return array(items);
}
inline std::string object(const std::vector<Line>& lines) {
    std::vector<std::string> members;
    for (const Line& l : lines) members.push_back(text(l.key) + ": " + l.value);
    return array(members, '{', '}');
}

}  // namespace wb::json
