#include "gui/session.hpp"

#include <QSettings>

namespace spplan::gui {

void saveSession(QSettings& settings, const SessionState& state) {
  settings.beginGroup("session");
  settings.setValue("model", state.model);
  settings.setValue("gpu", state.gpu);
  settings.setValue("gpus", state.gpus);
  settings.setValue("gpus_per_node", state.gpusPerNode);
  settings.setValue("seq", state.seq);
  settings.setValue("trainer", state.trainer);
  settings.setValue("price", state.price);
  settings.setValue("headroom", state.headroom);
  settings.beginGroup("optimizer");
  settings.remove("");  // a field no longer shown is not kept
  for (const auto& [flag, text] : state.optimizer) settings.setValue(flag, text);
  settings.endGroup();
  settings.beginGroup("pins");
  settings.remove("");  // a pin set back to "any" is not kept
  for (const auto& [flag, text] : state.pins) settings.setValue(flag, text);
  settings.endGroup();
  settings.beginGroup("stack");
  settings.remove("");  // a choice set back to the trainer's is not kept
  for (const auto& [name, text] : state.stack) settings.setValue(name, text);
  settings.endGroup();
  settings.beginGroup("corpus");
  settings.remove("");  // a corpus cleared is not kept
  for (const auto& [flag, text] : state.corpus) settings.setValue(flag, text);
  settings.endGroup();
  settings.endGroup();
}

SessionState loadSession(QSettings& settings) {
  SessionState state;
  settings.beginGroup("session");
  state.model = settings.value("model").toString();
  state.gpu = settings.value("gpu").toString();
  state.gpus = settings.value("gpus", 0).toInt();
  state.gpusPerNode = settings.value("gpus_per_node", 0).toInt();
  state.seq = settings.value("seq").toString();
  state.trainer = settings.value("trainer").toString();
  state.price = settings.value("price").toString();
  state.headroom = settings.value("headroom").toString();
  settings.beginGroup("optimizer");
  for (const QString& flag : settings.childKeys()) state.optimizer[flag] = settings.value(flag).toString();
  settings.endGroup();
  settings.beginGroup("pins");
  for (const QString& flag : settings.childKeys()) state.pins[flag] = settings.value(flag).toString();
  settings.endGroup();
  settings.beginGroup("stack");
  for (const QString& name : settings.childKeys()) state.stack[name] = settings.value(name).toString();
  settings.endGroup();
  settings.beginGroup("corpus");
  for (const QString& flag : settings.childKeys()) state.corpus[flag] = settings.value(flag).toString();
  settings.endGroup();
  settings.endGroup();
  return state;
}

}  // namespace spplan::gui
