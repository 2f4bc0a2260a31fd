// spplan-gui [--model M --gpu G --gpus N --gpus-per-node K --seq S] [--lengths FILE [--packing P]]
//            [--screenshot FILE.png]
//            [--screenshots DIR] | --help | -h | --version
// Without input flags the last session's inputs come back (QSettings). With --screenshot: fill
// the inputs, compute, render the 1280x800 window to FILE.png, exit 0; with --screenshots: one
// 1280x800 PNG per tab into DIR (both work with QT_QPA_PLATFORM=offscreen and ignore the saved
// session). Bad flags: one line on stderr, exit 2.
#include <QApplication>
#include <QDir>
#include <QPixmap>
#include <cstdio>

#include "gui/gui_options.hpp"
#include "gui/main_window.hpp"

namespace {

constexpr int kExitBadInput = 2;

int fail(const std::string& message) {
  std::fprintf(stderr, "spplan-gui: %s\n", message.c_str());
  return kExitBadInput;
}

}  // namespace

int main(int argc, char** argv) {
  // Flags first: a bad flag must not need a display to be reported, nor --help a window.
  if (const auto text = spplan::gui::helpOrVersion(argc, argv)) {
    std::fputs(text->c_str(), stdout);
    return 0;
  }
  const auto options = spplan::gui::parseGuiOptions(argc, argv);
  if (!options.ok()) return fail(options.status().message());

  QApplication app(argc, argv);
  QApplication::setOrganizationName("spplan");
  QApplication::setApplicationName("spplan-gui");
  spplan::gui::MainWindow window;
  const bool batch = options->screenshotPath || options->screenshotsDir;
  if (options->inputsGiven || batch || !window.restoreSession()) window.setInputs(*options);
  window.resize(1280, 800);
  window.show();
  if (!batch) return app.exec();
  window.recomputeNow();
  QApplication::processEvents();
  if (options->screenshotPath) {
    const QString path = QString::fromStdString(*options->screenshotPath);
    if (!window.grab().save(path, "PNG")) {
      return fail("--screenshot: value \"" + *options->screenshotPath + "\" cannot be written (allowed: a writable .png path)");
    }
  }
  if (options->screenshotsDir) {
    const QString dir = QString::fromStdString(*options->screenshotsDir);
    if (!QDir().mkpath(dir)) {
      return fail("--screenshots: value \"" + *options->screenshotsDir + "\" cannot be created (allowed: a writable folder)");
    }
    if (const spplan::Status s = window.saveScreenshots(dir); !s) return fail(s.message());
  }
  return 0;
}
