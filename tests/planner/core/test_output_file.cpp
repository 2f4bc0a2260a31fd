// write_file_atomically (planner/core/output_file.hpp): a regular file is replaced by a rename, a
// character device or a FIFO is written in place and stays what it was, a FIFO nobody reads is
// refused rather than waited on, and what no text belongs in is refused in one line. Every node
// lives in this test's own scratch folder: the real /dev/null is never touched.
#include "planner/core/output_file.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "tests/scratch_dir.hpp"

namespace spplan {
namespace {

namespace fs = std::filesystem;

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

mode_t type_of(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? (st.st_mode & S_IFMT) : 0;
}

size_t entries_in(const std::string& dir) {
  return static_cast<size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

// A device node of this test's own (root may make one; mknod(2)); "" when it cannot be made or
// opened for writing here (not root, a file system mounted nodev).
std::string device_node(const std::string& dir, const std::string& name, dev_t device) {
  const std::string path = dir + "/" + name;
  if (::mknod(path.c_str(), S_IFCHR | 0666, device) != 0) return "";
  const int fd = ::open(path.c_str(), O_WRONLY);
  if (fd < 0) return "";
  ::close(fd);
  return path;
}

class OutputFileTest : public testing::Test {
 protected:
  testing_scratch::ScratchDir scratch_{"output_file"};
  const std::string& dir() const { return scratch_.path(); }
};

// A text larger than a pipe holds (64 KiB on Linux), so the write waits on the reader.
const std::string kLongText(1 << 20, 'x');

TEST_F(OutputFileTest, FifoWithAReaderReceivesTheTextAndStaysAFifo) {
  const std::string fifo = dir() + "/trace.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  // Opened for reading before the write starts, so the writer always finds its reader; a second
  // writer of the test's own keeps the reader from seeing the end before the write and gives it
  // the end after (were the FIFO replaced, the reader would get nothing, not wait forever).
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0) << std::strerror(errno);
  const int keeper = ::open(fifo.c_str(), O_WRONLY);
  ASSERT_GE(keeper, 0) << std::strerror(errno);
  ASSERT_EQ(::fcntl(reader, F_SETFL, ::fcntl(reader, F_GETFL) & ~O_NONBLOCK), 0);
  std::string received;
  std::thread drain([&] {
    char buf[65536];
    ssize_t n = 0;
    while ((n = ::read(reader, buf, sizeof buf)) > 0) received.append(buf, static_cast<size_t>(n));
  });
  const Status s = write_file_atomically(fifo, kLongText);
  ::close(keeper);
  drain.join();
  ::close(reader);
  EXPECT_TRUE(s.is_ok()) << s.message();
  EXPECT_EQ(received.size(), kLongText.size());
  EXPECT_EQ(type_of(fifo), S_IFIFO);
  EXPECT_EQ(entries_in(dir()), 1u);  // no temporary sibling made
}

// A blocking open would wait for a reader forever; the write is refused at once instead.
TEST_F(OutputFileTest, FifoWithoutAReaderIsRefusedNotWaitedOn) {
  const std::string fifo = dir() + "/nobody.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  const Status s = write_file_atomically(fifo, "x");
  EXPECT_EQ(s.message(), fifo + ": cannot write (a FIFO nobody reads; allowed: a regular file, or a FIFO with a reader)");
  EXPECT_EQ(type_of(fifo), S_IFIFO);
}

// The reader leaves while the writer waits on a full pipe: EPIPE is one line, and the SIGPIPE the
// kernel sends with it does not end the test process (were it delivered, this test would die).
TEST_F(OutputFileTest, FifoWhoseReaderLeavesIsAnErrorNotADeath) {
  const std::string fifo = dir() + "/leaving.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0) << std::strerror(errno);
  Status s;
  std::thread writer([&] { s = write_file_atomically(fifo, kLongText); });
  ::close(reader);  // before the writer opens (no reader) or after (broken pipe): both are refusals
  writer.join();
  EXPECT_FALSE(s.is_ok());
  EXPECT_EQ(s.message().rfind(fifo + ": ", 0), 0u) << s.message();
  EXPECT_EQ(type_of(fifo), S_IFIFO);
}

TEST_F(OutputFileTest, CharacterDeviceIsWrittenInPlaceAndStaysADevice) {
  const std::string null_node = device_node(dir(), "null", makedev(1, 3));  // the null device's numbers
  if (null_node.empty()) GTEST_SKIP() << "cannot make a character device here (not root, or nodev)";
  const Status s = write_file_atomically(null_node, "plan text\n");
  EXPECT_TRUE(s.is_ok()) << s.message();
  EXPECT_EQ(type_of(null_node), S_IFCHR);
  EXPECT_EQ(entries_in(dir()), 1u);
}

TEST_F(OutputFileTest, FullDeviceIsOneLineAndStaysADevice) {
  const std::string full_node = device_node(dir(), "full", makedev(1, 7));  // /dev/full's numbers
  if (full_node.empty()) GTEST_SKIP() << "cannot make a character device here (not root, or nodev)";
  const Status s = write_file_atomically(full_node, "plan text\n");
  EXPECT_EQ(s.message(), full_node + ": write failed (No space left on device)");
  EXPECT_EQ(type_of(full_node), S_IFCHR);
}

// Replaced by a rename: a reader that opened the old file still reads the old text whole.
TEST_F(OutputFileTest, RegularFileIsReplacedAtomically) {
  const std::string plan = dir() + "/plan.toml";
  std::ofstream(plan) << "old\n";
  std::ifstream old_reader(plan);
  ASSERT_TRUE(write_file_atomically(plan, "new\n").is_ok());
  EXPECT_EQ(read_all(plan), "new\n");
  EXPECT_EQ(std::string((std::istreambuf_iterator<char>(old_reader)), std::istreambuf_iterator<char>()), "old\n");
  EXPECT_EQ(entries_in(dir()), 1u);
  ASSERT_TRUE(write_file_atomically(dir() + "/new.toml", "made\n").is_ok());  // a new name is made
  EXPECT_EQ(read_all(dir() + "/new.toml"), "made\n");
}

TEST_F(OutputFileTest, SymbolicLinkTargetIsWrittenAndTheLinkKept) {
  fs::create_directories(dir() + "/real");
  std::ofstream(dir() + "/real/plan.toml") << "old\n";
  fs::create_symlink("real/plan.toml", dir() + "/link.toml");
  ASSERT_TRUE(write_file_atomically(dir() + "/link.toml", "new\n").is_ok());
  EXPECT_EQ(type_of(dir() + "/link.toml"), S_IFLNK);
  EXPECT_EQ(read_all(dir() + "/real/plan.toml"), "new\n");
  EXPECT_EQ(entries_in(dir() + "/real"), 1u);
}

// Nothing is opened, made or replaced: each stays what it was.
TEST_F(OutputFileTest, DirectoryBlockDeviceAndSocketAreRefused) {
  const std::string folder = dir() + "/folder.toml";
  fs::create_directories(folder);
  const std::string disk = dir() + "/disk";
  const bool have_disk = ::mknod(disk.c_str(), S_IFBLK | 0600, makedev(7, 0)) == 0;  // a loop device's numbers
  const std::string socket_path = dir() + "/sock";
  const int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const bool have_socket = socket_path.size() < sizeof address.sun_path && sock >= 0 &&
                           (std::strcpy(address.sun_path, socket_path.c_str()),
                            ::bind(sock, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
  const struct {
    std::string path;
    bool made;
    std::string kind;
    mode_t type;
  } cases[] = {{folder, true, "a directory", S_IFDIR},
               {disk, have_disk, "a block device", S_IFBLK},
               {socket_path, have_socket, "a socket", S_IFSOCK}};
  for (const auto& c : cases) {
    if (!c.made) continue;
    EXPECT_EQ(write_file_atomically(c.path, "x").message(),
              c.path + ": cannot write (" + c.kind + "; allowed: a regular file, a character device or a FIFO)");
    EXPECT_EQ(type_of(c.path), c.type) << c.path;
  }
  if (sock >= 0) ::close(sock);
}

}  // namespace
}  // namespace spplan
