#!/usr/bin/env python3
"""Turn a corpus into a token file for `spplan run --data` (engine/io/data.hpp).

    scripts/tokenize.py --tokenizer Llama-3.1-8B --out corpus  a.jsonl b.json c.parquet d.txt
    scripts/tokenize.py --tokenizer tokenizer.json --eos-token '</s>' --out corpus  a.jsonl
    scripts/tokenize.py --tokenizer tokenizer.json --eos-id 2 --line-docs --out corpus  lines.txt

Each document is encoded with a Hugging Face tokenizer (the `tokenizers` package) and followed by
the EOS id, so the engine's --eos-id masks the labels that cross from one document into the next.
Nothing is downloaded: the tokenizer is local.

Tokenizer (--tokenizer):
  a model FOLDER   its tokenizer.json; the EOS is the folder's own: tokenizer_config.json's (else
                   special_tokens_map.json's) "eos_token", else config.json's (else
                   generation_config.json's) "eos_token_id"; of a list of ids the first is taken,
                   and a line on stderr says so. A line on stderr always says where the EOS came from.
  a tokenizer.json file alone does not say which token ends a document: pass --eos-token or --eos-id.
  --eos-token TEXT / --eos-id N override the folder's EOS.

Inputs, read in the order given; the format is chosen by the name (or forced with --format):
  *.jsonl, *.json-lines, *.ndjson   JSON Lines: one document per non-blank line, a JSON object
                   (its --text-field, "text" by default) or a JSON string. Streamed.
  *.json           by content: a JSON array of objects or strings (what `json.dump(list)` writes),
                   one JSON object ({"text": ...}: one document; {"data": [...]}: that array), or
                   JSON Lines (what Hugging Face datasets' to_json writes). An array or a single
                   object is read whole, so it needs memory for the file; JSON Lines is streamed.
  *.parquet        the --text-field column (a string column), read in row batches. Needs the
                   Python package `pyarrow`.
  anything else    UTF-8 text, one document per file, or with --line-docs one per non-blank line.
                   A text file whose first non-blank line is a JSON object is refused (it is JSON
                   Lines: --format jsonl reads it as such, --format text tokenizes it as it is).
  Refused by name: .csv .tsv .arrow .npy .pt .bin (.u16.bin/.u32.bin are already token ids)
                   and .zst .bz2 .xz .zip (decompress first).
  Any input but Parquet may be gzip-compressed (.jsonl.gz, .json.gz, .txt.gz): found by content.
  Positions in messages: lines count from 1; JSON array elements and Parquet rows from 0 ([3]).

Empty documents (those that encode to no ids: "" or, with some tokenizers, only whitespace) are
skipped and counted in the final line: kept, each would be a lone EOS right after the previous
one, teaching nothing but EOS-after-EOS. Blank lines in JSON Lines and --line-docs files separate
documents and are not counted.

Output: OUT.u16.bin when every id fits 16 bits (vocabulary <= 65536), else OUT.u32.bin,
little-endian, the documents in the order given. An --out that already ends in .u16.bin or
.u32.bin is used as is (and must fit). The last line on stdout is
    OUT.u16.bin: N tokens, D documents[ (K empty skipped)], vocabulary V; train with --data OUT.u16.bin --eos-id E

On failure nothing is written: the ids go to a hidden sibling (.NAME.tmp-PID) that replaces OUT
only once every input has been read, so an interrupted or failed run leaves no partial file and an
existing OUT as it was. No input is ever written: an --out that is an input (also through a link)
or lies inside an input or --tokenizer folder is refused before any input is read.
Every bad input or flag is one line on stderr naming the file (line, element or row), the key or
flag, the value found and what is allowed; exit 2. Interrupted (Ctrl-C, SIGTERM): exit 130 / 143.
"""

import argparse
import array
import contextlib
import gzip
import io
import itertools
import json
import os
import signal
import sys
import zlib

BATCH_DOCS = 1024  # documents per encode_batch call: bounded memory for any corpus size ...
BATCH_CHARS = 1 << 26  # ... and characters per call, for corpora of very long documents
PARQUET_BATCH_ROWS = 1024
GZIP_MAGIC = b"\x1f\x8b"
UTF8_BOM = b"\xef\xbb\xbf"
JSON_LINES_ENDINGS = (".jsonl", ".json-lines", ".ndjson")
REFUSED_ENDINGS = {  # corpora in a form this script does not read: never tokenize their bytes as text
    ".u16.bin": "already token ids (pass it to --data)", ".u32.bin": "already token ids (pass it to --data)",
    ".bin": "binary", ".csv": "CSV", ".tsv": "TSV", ".arrow": "Arrow", ".npy": "NumPy",
    ".pt": "a PyTorch tensor file", ".zst": "zstd-compressed", ".bz2": "bzip2-compressed",
    ".xz": "xz-compressed", ".zip": "a zip archive",
}
ALLOWED_INPUTS = ".jsonl / .json / .parquet / UTF-8 text, optionally gzip-compressed; or --format"


class Failure(Exception):
    """One line for stderr: the thing, what is wrong, what is allowed. Exit 2."""


class Stopped(BaseException):
    """A signal asked the run to stop; like KeyboardInterrupt, not an error to report as one."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def describe(value):
    """A JSON value for a message: its text, shortened, and its kind."""
    kinds = ((bool, "a boolean"), ((int, float), "a number"), (str, "a string"), (list, "an array"),
             (dict, "an object"))
    shown = json.dumps(value, ensure_ascii=False)
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    kind = next((k for t, k in kinds if isinstance(value, t)), None)
    return f"{shown} ({kind})" if kind else shown


def first_line(error):
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


# --- Reading inputs -------------------------------------------------------------------------------

class _Prefixed(io.RawIOBase):
    """Bytes already read, then the rest of the stream: the gzip check works on pipes too."""

    def __init__(self, prefix, rest):
        self.prefix, self.rest = prefix, rest

    def readable(self):
        return True

    def readinto(self, b):
        if not self.prefix:
            return self.rest.readinto(b)
        n = min(len(b), len(self.prefix))
        b[:n] = self.prefix[:n]
        self.prefix = self.prefix[n:]
        return n


@contextlib.contextmanager
def open_bytes(path):
    """The file's bytes, gunzipped when they start with the gzip magic."""
    with open(path, "rb") as raw:
        magic = raw.read(2)
        stream = io.BufferedReader(_Prefixed(magic, raw), 1 << 20)
        yield gzip.GzipFile(fileobj=stream, mode="rb") if magic == GZIP_MAGIC else stream


def kind_by_name(path):
    """'jsonl', 'json', 'parquet' or 'text', from the name (a .gz ending aside)."""
    name = os.path.basename(path).lower()
    name = name[:-3] if name.endswith(".gz") else name
    for ending, kind in REFUSED_ENDINGS.items():
        if name.endswith(ending):
            raise Failure(f"{path}: {kind}, not a corpus this script reads (allowed: {ALLOWED_INPUTS})")
    if name.endswith(JSON_LINES_ENDINGS):
        return "jsonl"
    if name.endswith(".json"):
        return "json"
    return "parquet" if name.endswith(".parquet") else "text"


def read_head(stream):
    """The first lines, up to the second non-blank one, the BOM removed: enough to tell the layout."""
    head, nonblank = [], 0
    for line in stream:
        if not head and line.startswith(UTF8_BOM):
            line = line[len(UTF8_BOM):]
        head.append(line)
        nonblank += bool(line.strip())
        if nonblank == 2:
            break
    return head


def first_object_line(head):
    """(line number, True) when the first non-blank line is one JSON object; (number, False) else."""
    for number, line in enumerate(head, 1):
        if line.strip():
            try:
                return number, isinstance(json.loads(line), dict)
            except ValueError:
                return number, False
    return 0, False


def json_layout(head):
    """A .json file: 'jsonl' (several lines, the first one JSON object) or 'value' (one JSON value)."""
    nonblank = [line.strip() for line in head if line.strip()]
    if not nonblank or not nonblank[0].startswith(b"{"):
        return "value" if nonblank and nonblank[0].startswith(b"[") else "jsonl"
    return "jsonl" if len(nonblank) == 2 and first_object_line(head)[1] else "value"


def decode(raw, where, what="text"):
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise Failure(f"{where}: byte {e.start} of the {what} is not valid UTF-8 (allowed: UTF-8 text)") from None


def record_text(record, where, text_field):
    """The document of one JSON record: a string, or an object's --text-field string."""
    if isinstance(record, str):
        return record
    if not isinstance(record, dict):
        raise Failure(f'{where}: found {describe(record)}, not an object or string '
                      f'(allowed: {{"{text_field}": "..."}} or "...")')
    if text_field not in record:
        keys = ", ".join(f'"{k}"' for k in list(record)[:8]) + (", ..." if len(record) > 8 else "")
        raise Failure(f'{where}: key "{text_field}": missing (found keys: {keys or "none"}; '
                      f'allowed: --text-field NAME)')
    value = record[text_field]
    if not isinstance(value, str):
        raise Failure(f'{where}: key "{text_field}": value {describe(value)} is not a string '
                      f'(allowed: a JSON string)')
    return value


def jsonl_documents(path, lines, text_field):
    for number, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        where = f"{path}:{number}"
        try:
            record = json.loads(decode(raw, where, "line").rstrip())  # columns within the line
        except json.JSONDecodeError as e:
            raise Failure(f"{where}: column {e.colno}: not valid JSON ({e.msg}) "
                          f"(allowed: one JSON object or string per line)") from None
        yield record_text(record, where, text_field)


def value_documents(path, data, text_field):
    """A .json file holding one JSON value: an array of records, {"data": [...]} or one record."""
    try:
        value = json.loads(decode(data, path, "file"))
    except json.JSONDecodeError as e:
        raise Failure(f"{path}: line {e.lineno} column {e.colno}: not valid JSON ({e.msg}) "
                      f"(allowed: a JSON array, one JSON object, or JSON Lines)") from None
    if isinstance(value, dict) and text_field not in value and isinstance(value.get("data"), list):
        value, prefix = value["data"], f"{path}: data"
    elif isinstance(value, dict):
        if text_field not in value:
            keys = ", ".join(f'"{k}"' for k in list(value)[:8])
            raise Failure(f'{path}: one JSON object without key "{text_field}" or a "data" array '
                          f'(found keys: {keys or "none"}; allowed: --text-field NAME)')
        yield record_text(value, path, text_field)
        return
    elif isinstance(value, list):
        prefix = f"{path}: "
    else:
        raise Failure(f"{path}: found {describe(value)} (allowed: a JSON array, one JSON object, or JSON Lines)")
    for index, record in enumerate(value):
        yield record_text(record, f"{prefix}[{index}]", text_field)


def text_documents(path, lines, line_docs):
    if not line_docs:
        yield decode(b"".join(lines), path, "file")
        return
    for number, raw in enumerate(lines, 1):
        if raw.strip():
            yield decode(raw, f"{path}:{number}", "line").rstrip("\r\n")


def parquet_file(path, text_field):
    """The opened Parquet file, its --text-field checked to be a string column."""
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise Failure(f"{path}: reading Parquet needs the Python package `pyarrow` (pip install pyarrow)") from None
    try:
        file = pyarrow.parquet.ParquetFile(path)
    except (pyarrow.ArrowException, OSError) as e:
        raise Failure(f"{path}: not a readable Parquet file ({first_line(e)})") from None
    names = file.schema_arrow.names
    if text_field not in names:
        shown = ", ".join(f'"{n}"' for n in names[:8]) + (", ..." if len(names) > 8 else "")
        raise Failure(f'{path}: column "{text_field}": missing (found columns: {shown or "none"}; '
                      f'allowed: --text-field NAME)')
    kind = file.schema_arrow.field(text_field).type
    value_kind = kind.value_type if pyarrow.types.is_dictionary(kind) else kind
    if not (pyarrow.types.is_string(value_kind) or pyarrow.types.is_large_string(value_kind)
            or str(value_kind) == "string_view"):
        raise Failure(f'{path}: column "{text_field}": type {kind} is not a string (allowed: a string column)')
    return file


def parquet_documents(path, text_field):
    import pyarrow
    file = parquet_file(path, text_field)
    row = 0
    try:
        for batch in file.iter_batches(batch_size=PARQUET_BATCH_ROWS, columns=[text_field]):
            for value in batch.column(0).to_pylist():
                if value is None:
                    raise Failure(f'{path}: row [{row}]: column "{text_field}": value null (allowed: a string)')
                yield value
                row += 1
    except pyarrow.ArrowException as e:
        raise Failure(f"{path}: row [{row}]: cannot read ({first_line(e)})") from None


def documents(path, fmt, text_field, line_docs):
    """Yields the text of each document of one input file; a bad one raises Failure naming it."""
    kind = kind_by_name(path) if fmt == "auto" else fmt
    try:
        if kind == "parquet":
            yield from parquet_documents(path, text_field)
            return
        with open_bytes(path) as stream:
            head = read_head(stream)
            lines = itertools.chain(head, stream)
            if kind == "json":
                kind = json_layout(head)
            if kind == "text" and fmt == "auto":
                number, is_object = first_object_line(head)
                if is_object:
                    raise Failure(f"{path}:{number}: a JSON object in a text file: JSON Lines? (allowed: "
                                  f'--format jsonl to read each line\'s "{text_field}", --format text to '
                                  f"tokenize the file as it is)")
            if kind == "jsonl":
                yield from jsonl_documents(path, lines, text_field)
            elif kind == "value":
                yield from value_documents(path, b"".join(lines), text_field)
            else:
                yield from text_documents(path, lines, line_docs)
    except (OSError, EOFError, zlib.error) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else first_line(e)
        raise Failure(f"{path}: cannot read ({reason})") from None


def check_inputs(inputs, fmt, text_field):
    """Before anything is read: every input exists, has a format this script reads."""
    for path in inputs:
        if os.path.isdir(path):
            raise Failure(f"{path}: a folder (allowed: files; list them, e.g. {path}/*.jsonl)")
        if not os.path.exists(path):
            raise Failure(f"{path}: no such file")
        if (kind_by_name(path) if fmt == "auto" else fmt) == "parquet":
            parquet_file(path, text_field)


# --- The tokenizer and its EOS --------------------------------------------------------------------

def load_tokenizer(spec):
    """(tokenizer, its tokenizer.json path, the model folder or None)."""
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise Failure("scripts/tokenize.py: needs the Python package `tokenizers` (pip install tokenizers)") from None
    folder = spec if os.path.isdir(spec) else None
    file = os.path.join(spec, "tokenizer.json") if folder else spec
    if folder and not os.path.isfile(file):
        found = "tokenizer.model, " if os.path.exists(os.path.join(spec, "tokenizer.model")) else ""
        raise Failure(f"--tokenizer: {spec}: no tokenizer.json in the folder ({found}allowed: a tokenizer.json "
                      f"file or a Hugging Face model folder holding one)")
    if not os.path.exists(file):
        raise Failure(f"--tokenizer: {spec}: no such file or folder (allowed: a tokenizer.json file or a model folder)")
    try:
        return Tokenizer.from_file(file), file, folder
    except Exception as e:  # tokenizers raises its own exception type for unreadable files
        raise Failure(f"--tokenizer: {file}: cannot load ({first_line(e)})") from None


def read_json_object(path):
    """The JSON object in path, or None when there is no such file."""
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8-sig") as f:
            value = json.load(f)
    except (OSError, ValueError) as e:
        raise Failure(f"{path}: cannot read as JSON ({first_line(e)})") from None
    if not isinstance(value, dict):
        raise Failure(f"{path}: found {describe(value)} (allowed: a JSON object)")
    return value


def folder_eos(folder, tok, tok_file):
    """(EOS id, where it came from) from a model folder's files, or None when they name none."""
    for name in ("tokenizer_config.json", "special_tokens_map.json"):
        path = os.path.join(folder, name)
        token = (read_json_object(path) or {}).get("eos_token")
        token = token.get("content") if isinstance(token, dict) else token
        if token is None:
            continue
        if not isinstance(token, str):
            raise Failure(f'{path}: key "eos_token": value {describe(token)} is not a string '
                          f'(allowed: a string or {{"content": "..."}}; or --eos-token / --eos-id)')
        eos_id = tok.token_to_id(token)
        if eos_id is None:
            raise Failure(f'{path}: key "eos_token": value "{token}" is not a token of {tok_file} '
                          f"(allowed: --eos-token TEXT or --eos-id N)")
        return eos_id, f'{path} "eos_token" "{token}"'
    for name in ("config.json", "generation_config.json"):
        path = os.path.join(folder, name)
        value = (read_json_object(path) or {}).get("eos_token_id")
        if value is None:
            continue
        ids = value if isinstance(value, list) else [value]
        if not ids or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
            raise Failure(f'{path}: key "eos_token_id": value {describe(value)} is not an id '
                          f"(allowed: an integer or a list of them; or --eos-token / --eos-id)")
        more = f" (the first of {value}; another: --eos-id N)" if len(ids) > 1 else ""
        return ids[0], f'{path} "eos_token_id"{more}'
    return None


def resolve_eos(args, tok, tok_file, folder, vocab_size):
    """The EOS id: --eos-token / --eos-id, else the model folder's; and a note saying where from."""
    if args.eos_token is not None:
        eos_id = tok.token_to_id(args.eos_token)
        if eos_id is None:
            raise Failure(f'--eos-token: value "{args.eos_token}" is not a token of {tok_file} '
                          f"(allowed: a token of its vocabulary, or --eos-id N)")
        return eos_id, None
    if args.eos_id is not None:
        eos_id, source = args.eos_id, "--eos-id"
    elif folder is None:
        raise Failure(f"--tokenizer: {tok_file} is a tokenizer.json file, which does not name the token that "
                      f"ends a document (allowed: --eos-token TEXT, --eos-id N, or --tokenizer MODEL_FOLDER: "
                      f"the folder holding tokenizer.json and tokenizer_config.json)")
    else:
        found = folder_eos(folder, tok, tok_file)
        if found is None:
            raise Failure(f"--tokenizer: {folder}: no EOS in tokenizer_config.json, special_tokens_map.json, "
                          f"config.json or generation_config.json (allowed: --eos-token TEXT or --eos-id N)")
        eos_id, source = found
    if not 0 <= eos_id < vocab_size:
        raise Failure(f"{source}: value {eos_id} is not an id of {tok_file} (allowed: 0 to {vocab_size - 1})")
    return eos_id, None if source == "--eos-id" else f"EOS: id {eos_id}, from {source}"


# --- The output -----------------------------------------------------------------------------------

def output_path(out, vocab_size):
    width = "u16" if vocab_size <= 1 << 16 else "u32"
    for fixed in ("u16", "u32"):
        if out.endswith(f".{fixed}.bin"):
            if fixed == "u16" and width == "u32":
                raise Failure(f"--out: {out}: the vocabulary has {vocab_size} ids, more than uint16 holds "
                              f"(allowed: a .u32.bin name)")
            return out, fixed
    return f"{out}.{width}.bin", width


def same_file(a, b):
    try:
        return os.path.exists(a) and os.path.exists(b) and os.path.samefile(a, b)
    except OSError:
        return False


def check_output(path, protected):
    """The output is no input, lies in no input folder, and its folder exists."""
    real = os.path.realpath(path)
    for given in protected:
        given_real = os.path.realpath(given)
        if real == given_real or same_file(path, given):
            raise Failure(f"--out: {path} is the input {given} (allowed: a path that is no input; "
                          f"the input is left as it is)")
        if os.path.isdir(given) and real.startswith(given_real.rstrip(os.sep) + os.sep):
            raise Failure(f"--out: {path} lies inside the input folder {given} (allowed: a path outside "
                          f"every input and --tokenizer folder)")
    if os.path.isdir(path):
        raise Failure(f"--out: {path} is a folder (allowed: a file path, e.g. {os.path.join(path, 'corpus')})")
    folder = os.path.dirname(path) or "."
    if not os.path.isdir(folder):
        raise Failure(f"--out: {path}: the folder {folder} does not exist")


def write_ids(out, tok, eos_id, code, texts):
    """Encodes texts in batches into out, each followed by the EOS; (tokens, documents, empty)."""
    counts = [0, 0, 0]
    batch, chars = [], 0

    def flush():
        ids = array.array(code)
        for enc in tok.encode_batch(batch, add_special_tokens=False):
            if not enc.ids:
                counts[2] += 1
                continue
            ids.extend(enc.ids)
            ids.append(eos_id)
            counts[1] += 1
        if sys.byteorder != "little":
            ids.byteswap()
        ids.tofile(out)  # an OSError here (a full disk): write_atomically's one line names --out
        counts[0] += len(ids)

    for text in texts:
        batch.append(text)
        chars += len(text)
        if len(batch) == BATCH_DOCS or chars >= BATCH_CHARS:
            flush()
            batch, chars = [], 0
    if batch:
        flush()
    return tuple(counts)


def write_atomically(path, fill):
    """Runs fill(file) on a hidden sibling of path and moves it into place only when fill returns:
    on any failure or interruption the sibling is removed and an existing path left as it was."""
    tmp = os.path.join(os.path.dirname(path) or ".", f".{os.path.basename(path)}.tmp-{os.getpid()}")
    with contextlib.suppress(FileNotFoundError):
        os.remove(tmp)  # a stale one from a killed run that had this process id
    try:
        with open(tmp, "xb") as out:
            result = fill(out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except OSError as e:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise Failure(f"--out: {path}: cannot write ({e.strerror or first_line(e)})") from None
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise
    with contextlib.suppress(OSError):  # the rename itself durable; not every file system allows it
        folder = os.open(os.path.dirname(path) or ".", os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
    return result


# --- The command ----------------------------------------------------------------------------------

def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("inputs", nargs="+", help="corpus files, in order: .jsonl, .json, .parquet, text; .gz allowed")
    p.add_argument("--tokenizer", required=True,
                   help="a Hugging Face model folder (its tokenizer.json and EOS) or a tokenizer.json file")
    p.add_argument("--out", required=True, help="output path, without or with .u16.bin / .u32.bin")
    eos = p.add_mutually_exclusive_group()
    eos.add_argument("--eos-token", help="the end-of-sequence token's text, e.g. '</s>' or '<|endoftext|>' "
                     "(default: the model folder's)")
    eos.add_argument("--eos-id", type=int, help="the end-of-sequence id (default: the model folder's)")
    p.add_argument("--text-field", default="text", help='the JSON key or Parquet column holding the text (default "text")')
    p.add_argument("--line-docs", action="store_true", help="text files: one document per non-blank line")
    p.add_argument("--format", choices=("auto", "jsonl", "json", "parquet", "text"), default="auto",
                   help="read every input as this format (default auto: by the name, .json by content)")
    return p.parse_args()


def run(args):
    tok, tok_file, folder = load_tokenizer(args.tokenizer)
    vocab_size = tok.get_vocab_size(with_added_tokens=True)
    eos_id, note = resolve_eos(args, tok, tok_file, folder, vocab_size)
    path, width = output_path(args.out, vocab_size)
    check_output(path, args.inputs + [args.tokenizer, tok_file])
    check_inputs(args.inputs, args.format, args.text_field)
    if note:
        print(note, file=sys.stderr)

    def texts():
        for name in args.inputs:
            yield from documents(name, args.format, args.text_field, args.line_docs)

    def fill(out):
        counts = write_ids(out, tok, eos_id, "H" if width == "u16" else "I", texts())
        if counts[1] == 0:
            raise Failure(f"{', '.join(args.inputs)}: no documents ({counts[2]} empty; allowed: at least one "
                          f"document that gives a token)")
        return counts

    total, docs, empty = write_atomically(path, fill)
    skipped = f" ({empty} empty skipped)" if empty else ""
    print(f"{path}: {total} tokens, {docs} documents{skipped}, vocabulary {vocab_size}; "
          f"train with --data {path} --eos-id {eos_id}")


def main():
    args = parse_args()

    def stop(signum, frame):
        raise Stopped(signum)

    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), stop)
    try:
        run(args)
        return 0
    except Failure as e:
        print(e, file=sys.stderr)
        return 2
    except (KeyboardInterrupt, Stopped) as e:
        signum = e.signum if isinstance(e, Stopped) else signal.SIGINT
        print(f"scripts/tokenize.py: interrupted ({signal.Signals(signum).name}): nothing written", file=sys.stderr)
        return 128 + signum
    except Exception as e:  # a bug here: still one line, and still nothing written (write_atomically)
        print(f"scripts/tokenize.py: unexpected {type(e).__name__}: {first_line(e)}; nothing written", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
