// RFC 4180 CSV reading and writing.
//
// Reading is lenient where RFC 4180 is silent or strict: records may end in
// LF, CRLF or a lone CR; a UTF-8 byte-order mark at the start is skipped;
// blank lines are skipped (so a trailing newline or an empty line never yields
// a row); a quote inside an unquoted field is kept literally; text after a
// closing quote is appended to the field. Writing emits a row holding one
// empty field as `""` so that it reads back as that row, not a blank line,
// and quotes a field that starts with a byte-order mark.
#include "src/core/csv.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <istream>
#include <iterator>
#include <ostream>
#include <stdexcept>

namespace vrdmasim {

std::string csv_field(const std::string& s) {
    // A field that starts with a UTF-8 byte-order mark is quoted too: as
    // the file's first field it would read back without it (a reader skips
    // a mark at the start of a file). Found by tests/fuzz/fuzz_csv.
    const bool bom = s.compare(0, 3, "\xEF\xBB\xBF") == 0;
    if (!bom && s.find_first_of(",\"\r\n") == std::string::npos) return s;
    std::string out;
    out.reserve(s.size() + 2);
    out += '"';
    for (char c : s) {
        if (c == '"') out += '"';
        out += c;
    }
    out += '"';
    return out;
}

void write_csv_row(std::ostream& os, const CsvRow& row) {
    if (row.size() == 1 && row[0].empty()) {
        os << "\"\"\n";
        return;
    }
    bool first = true;
    for (const std::string& f : row) {
        if (!first) os << ',';
        first = false;
        os << csv_field(f);
    }
    os << '\n';
}

std::vector<CsvRow> read_csv(std::istream& is) {
    const std::string text((std::istreambuf_iterator<char>(is)), std::istreambuf_iterator<char>());
    std::vector<CsvRow> rows;
    CsvRow row;
    std::string field;
    bool row_started = false;   // anything (even "" or a comma) seen in this record
    std::size_t i = 0;
    const std::size_t n = text.size();
    if (n >= 3 && text.compare(0, 3, "\xEF\xBB\xBF") == 0) i = 3;

    auto end_record = [&]() {
        if (row_started) {
            row.push_back(std::move(field));
            rows.push_back(std::move(row));
        }
        row.clear();
        field.clear();
        row_started = false;
    };

    while (i < n) {
        const char c = text[i];
        if (c == '"' && field.empty()) {
            // Quoted field (a quote at the start of a field).
            row_started = true;
            const std::size_t open_at = i;
            ++i;
            bool closed = false;
            while (i < n) {
                if (text[i] == '"') {
                    if (i + 1 < n && text[i + 1] == '"') {
                        field += '"';
                        i += 2;
                    } else {
                        ++i;
                        closed = true;
                        break;
                    }
                } else {
                    field += text[i++];
                }
            }
            if (!closed) {
                std::size_t line = 1;
                for (std::size_t k = 0; k < open_at; ++k) line += text[k] == '\n';
                throw std::runtime_error("CSV: unterminated quoted field starting on line " + std::to_string(line));
            }
        } else if (c == ',') {
            row_started = true;
            row.push_back(std::move(field));
            field.clear();
            ++i;
        } else if (c == '\n') {
            end_record();
            ++i;
        } else if (c == '\r') {
            end_record();
            ++i;
            if (i < n && text[i] == '\n') ++i;
        } else {
            row_started = true;
            field += c;
            ++i;
        }
    }
    end_record();
    return rows;
}

std::vector<CsvRow> read_csv_file(const std::string& path) {
    std::ifstream is(path, std::ios::in | std::ios::binary);
    if (!is) throw std::runtime_error("cannot read CSV file '" + path + "': " + std::strerror(errno));
    auto rows = read_csv(is);
    if (is.bad()) throw std::runtime_error("error reading CSV file '" + path + "'");
    return rows;
}

}   // namespace vrdmasim
