// Lengths files: a table of files that read (CSV and JSON forms) with the histogram each gives, a
// table of files that are refused with each one's message, and the file-level refusals (a folder,
// a device, a file past the size bound).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "planner/corpus/corpus.hpp"
#include "tests/scratch_dir.hpp"

namespace spplan::corpus {
namespace {

using Histogram = std::vector<std::pair<int64_t, int64_t>>;
using testing_scratch::ScratchDir;

TEST(LengthsFile, GoodFilesTable) {
  const Histogram kSmall{{2, 1}, {3, 2}, {5, 1}};
  const struct {
    const char* name;
    std::string text;
    Histogram expected;
  } cases[] = {
      {"one length a line", "5\n3\n3\n2\n", kSmall},
      {"no newline at the end", "5\n3\n3\n2", kSmall},
      {"length,count lines", "2,1\n3,2\n5,1\n", kSmall},
      {"a header, a comment, blank lines", "# from corpus.u16.bin\nlength,count\n\n5,1\n  \n3 , 2\n2,1\n", kSmall},
      {"the header length alone", "length\n5\n3\n3\n2\n", kSmall},
      {"header in another case", "Length,Count\n5,1\n3,2\n2,1\n", kSmall},
      {"CRLF and a UTF-8 BOM (Excel)", "\xEF\xBB\xBFlength,count\r\n5,1\r\n3,2\r\n2,1\r\n", kSmall},
      {"a length given twice adds up", "3,1\n5\n3\n2,1\n", kSmall},
      {"lines and length,count lines mixed", "5\n3,2\n2\n", kSmall},
      {"comments after the data", "5\n3,2\n2\n# end\n", kSmall},
      {"the bounds themselves", "1099511627776,1\n1,1023\n", {{1, 1023}, {int64_t{1} << 40, 1}}},
      {"JSON list", "[5, 3, 3, 2]", kSmall},
      {"JSON list after blanks", "\n  [5,3,3,2]\n", kSmall},
      {"JSON object of counts", "{\"2\": 1, \"3\": 2, \"5\": 1}", kSmall},
      {"JSON lengths key", "{\"lengths\": [5, 3, 3, 2]}", kSmall},
      {"JSON lengths key beside counts", "{\"lengths\": [5, 3], \"3\": 1, \"2\": 1}", kSmall},
      {"JSON count at the document bound", "{\"7\": 2147483648}", {{7, int64_t{1} << 31}}},
  };
  for (const auto& c : cases) {
    const auto corpus = read_lengths_text("f", c.text);
    ASSERT_TRUE(corpus.ok()) << c.name << ": " << corpus.status().message();
    EXPECT_EQ(corpus->length_counts, c.expected) << c.name;
  }
}

TEST(LengthsFile, BadFilesTable) {
  const std::string kLength = "(allowed: a whole number of tokens from 1 to 1099511627776)";
  const std::string kCount = "(allowed: a whole number of documents from 1 to 2147483648)";
  const std::string kJson = "(allowed: a JSON list of lengths [LENGTH, ...], {\"LENGTH\": COUNT, ...} or {\"lengths\": [...]})";
  const std::string kEmpty =
      "f: no documents (allowed: one or more document lengths: LENGTH or LENGTH,COUNT lines, or JSON [LENGTH, ...] or "
      "{\"LENGTH\": COUNT, ...}; docs/lengths.md)";
  const struct {
    const char* name;
    std::string text, message;
  } cases[] = {
      {"empty", "", kEmpty},
      {"only a header and comments", "# nothing\nlength,count\n", kEmpty},
      {"empty JSON list", "[]", kEmpty},
      {"empty JSON object", "{}", kEmpty},
      {"zero", "5\n0\n", "f: line 2: value \"0\" is not a document length " + kLength},
      {"negative", "-3\n", "f: line 1: value \"-3\" is not a document length (allowed: a whole number of tokens from 1 to "
                           "1099511627776; or the header \"length\" or \"length,count\" first)"},
      {"a fraction", "length\n2.5\n", "f: line 2: value \"2.5\" is not a document length " + kLength},
      {"past 2^40", "1099511627777\n", "f: line 1: value \"1099511627777\" is not a document length (allowed: a whole number "
                                       "of tokens from 1 to 1099511627776; or the header \"length\" or \"length,count\" first)"},
      {"a header later", "5\nlength\n", "f: line 2: value \"length\" is not a document length " + kLength},
      {"count zero", "5,0\n", "f: line 1: value \"0\" is not a document count " + kCount},
      {"count missing", "5,\n", "f: line 1: value \"\" is not a document count " + kCount},
      {"count past 2^31", "5,2147483649\n", "f: line 1: value \"2147483649\" is not a document count " + kCount},
      {"three fields", "5,1,2\n", "f: line 1: value \"5,1,2\" is not a line of a lengths file (allowed: LENGTH or LENGTH,COUNT)"},
      {"a trailing comment", "5 # five\n", "f: line 1: value \"5 # five\" is not a document length (allowed: a whole number "
                                           "of tokens from 1 to 1099511627776; or the header \"length\" or \"length,count\" first)"},
      {"a long value is cut", "2\n" + std::string(100, '9') + "\n",
       "f: line 2: value \"" + std::string(40, '9') + "...\" is not a document length " + kLength},
      {"a control byte is shown", "2\n3\x01\n", "f: line 2: value \"3\\x01\" is not a document length " + kLength},
      {"documents past 2^31", "5,2147483648\n6,1\n",
       "f: line 2: the documents add up to more than 2147483648 (allowed: at most 2^31 documents in a corpus)"},
      {"tokens past 2^50", "1099511627776,1024\n1,1\n",
       "f: line 2: the tokens add up to more than 1125899906842624 (allowed: at most 2^50 tokens in a corpus)"},
      {"JSON element zero", "[5, 0]", "f: [1]: value 0 is not a document length " + kLength},
      {"JSON element a string", "[\"5\"]", "f: [0]: value \"5\" is not a document length " + kLength},
      {"JSON element a float", "[5, 2.0]", "f: [1]: value 2.0 is not a document length " + kLength},
      {"JSON element nested", "[5, [3]]", "f: [1]: value an array is not a document length " + kLength},
      {"JSON nested deep", std::string(100000, '[') , "f: [0]: value an array is not a document length " + kLength},
      {"JSON element past int64", "[18446744073709551615]",
       "f: [0]: value 18446744073709551615 is not a document length " + kLength},
      {"JSON lengths element", "{\"lengths\": [5, -1]}", "f: key \"lengths\" [1]: value -1 is not a document length " + kLength},
      {"JSON lengths not a list", "{\"lengths\": 5}",
       "f: key \"lengths\": value 5 is not a list of document lengths (allowed: [LENGTH, ...], LENGTH a whole number of "
       "tokens from 1 to 1099511627776)"},
      {"JSON count zero", "{\"5\": 0}", "f: key \"5\": value 0 is not a document count " + kCount},
      {"JSON count a string", "{\"5\": \"2\"}", "f: key \"5\": value \"2\" is not a document count " + kCount},
      {"JSON count an object", "{\"5\": {}}", "f: key \"5\": value an object is not a document count " + kCount},
      {"JSON key not a length", "{\"source\": \"x\"}",
       "f: key \"source\": not a document length (allowed: \"lengths\": [LENGTH, ...], or \"LENGTH\": COUNT keys, LENGTH a "
       "whole number of tokens from 1 to 1099511627776)"},
      {"JSON key twice", "{\"5\": 1, \"5\": 2}", "f: key \"5\": given twice in one object (allowed: each key once)"},
      {"JSON cut short", "[", "f: not valid JSON at byte 2 " + kJson},
      {"JSON syntax", "[5, 3,]", "f: not valid JSON at byte 7 " + kJson},
      {"JSON two values", "[5] [3]", "f: not valid JSON at byte 5 " + kJson},
      {"JSON number overflow", "[1e400]", "f: not valid JSON: number overflow parsing '1e400' " + kJson},
  };
  for (const auto& c : cases) {
    const auto corpus = read_lengths_text("f", c.text);
    ASSERT_FALSE(corpus.ok()) << c.name;
    EXPECT_EQ(corpus.status().message(), c.message) << c.name;
  }
}

TEST(LengthsFile, WrittenFileReadsBackUnchanged) {
  const Corpus corpus{{{1, 4}, {4096, 10}, {131072, 3}}};
  const std::string text = lengths_csv(corpus, "document lengths of a\nb.u16.bin");
  EXPECT_EQ(text, "# document lengths of a\\x0ab.u16.bin\nlength,count\n1,4\n4096,10\n131072,3\n");
  const auto back = read_lengths_text("f", text);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->length_counts, corpus.length_counts);
}

TEST(LengthsFile, ReadsFilesAndRefusesWhatIsNoFile) {
  const ScratchDir dir("lengths_file");
  const std::string csv = dir.path() + "/lengths.csv", json = dir.path() + "/lengths.txt";
  std::ofstream(csv) << "length,count\n3,2\n";
  std::ofstream(json) << "[3, 3]";  // told by its content, whatever its name
  for (const std::string& path : {csv, json}) {
    const auto corpus = read_lengths_file(path);
    ASSERT_TRUE(corpus.ok()) << corpus.status().message();
    EXPECT_EQ(corpus->length_counts, (Histogram{{3, 2}}));
  }
  const auto bad = read_lengths_file(csv + ".missing");
  EXPECT_EQ(bad.status().message(), csv + ".missing: cannot open (no such file)");
  EXPECT_EQ(read_lengths_file(dir.path()).status().message(), dir.path() + ": cannot open (a directory; allowed: a file)");
  EXPECT_EQ(read_lengths_file("/dev/zero").status().message(),
            "/dev/zero: cannot open (not a regular file; allowed: a file)");
  // A sparse file one byte past the bound: refused by its size, before a byte is read.
  const std::string large = dir.path() + "/large.csv";
  std::ofstream(large) << "5\n";
  std::filesystem::resize_file(large, static_cast<uintmax_t>(kMaxLengthsFileBytes) + 1);
  EXPECT_EQ(read_lengths_file(large).status().message(),
            large + ": larger than 1024 MiB (allowed: a lengths file up to that size; LENGTH,COUNT lines, as spplan "
                    "lengths writes, hold any corpus in far less)");
}

}  // namespace
}  // namespace spplan::corpus
