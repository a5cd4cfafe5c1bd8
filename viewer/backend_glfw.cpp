// SPDX-FileCopyrightText: 2026 tensordiag contributors
// SPDX-License-Identifier: Apache-2.0
//
// GLFW + OpenGL 3 back-end, using the GLFW and OpenGL3 ImGui back-ends that Debian's
// libimgui.a carries.
#include <tensordiag/core/error.hpp>
#include <tensordiag/viewer/codes.hpp>

#include <GLFW/glfw3.h>
#include <fmt/format.h>
#include <imgui.h>

#include <GL/gl.h>
#include <GL/glext.h>
#include <algorithm>
#include <backends/imgui_impl_glfw.h>
#include <backends/imgui_impl_opengl3.h>
#include <mutex>

#include "backend.hpp"

namespace tdiag::view {
namespace {

[[noreturn]] void fail(std::string message) {
  diagnostic d;
  d.code = codes::no_window;
  d.title = "cannot open a window";
  d.message = std::move(message);
  d.hint = "tdiag-view needs a display (X11 or Wayland) and OpenGL 3.3; on a headless machine "
           "run it under `xvfb-run -a` or use --screenshot under xvfb-run";
  throw error(std::move(d));
}

std::mutex drop_mutex;
std::vector<std::string>* drop_target = nullptr;

void on_drop(GLFWwindow*, int count, const char** paths) {
  std::lock_guard lock(drop_mutex);
  if (drop_target == nullptr)
    return;
  for (int i = 0; i < count; ++i)
    drop_target->emplace_back(paths[i]);
}

std::string glfw_error_text() {
  const char* text = nullptr;
  glfwGetError(&text);
  return text ? text : "unknown GLFW error";
}

// Every OpenGL entry point the back-end calls, loaded through GLFW from the context's driver:
// tdiag-view links no libGL (a wheel's viewer must start where none is installed, to say so),
// and ImGui's OpenGL 3 back-end loads its own the same way. Types only from GL/gl.h.
template <class F> bool load_gl(F& f, const char* name) {
  f = reinterpret_cast<F>(glfwGetProcAddress(name));
  return f != nullptr;
}

struct gl_functions {
  void (*viewport)(GLint, GLint, GLsizei, GLsizei) = nullptr;
  void (*clear_color)(GLfloat, GLfloat, GLfloat, GLfloat) = nullptr;
  void (*clear)(GLbitfield) = nullptr;
  void (*finish)() = nullptr;
  void (*pixel_store)(GLenum, GLint) = nullptr;
  void (*read_pixels)(GLint, GLint, GLsizei, GLsizei, GLenum, GLenum, void*) = nullptr;
  GLenum (*get_error)() = nullptr;
  // The offscreen framebuffer's (OpenGL 3.0).
  PFNGLGENFRAMEBUFFERSPROC gen_framebuffers = nullptr;
  PFNGLBINDFRAMEBUFFERPROC bind_framebuffer = nullptr;
  PFNGLDELETEFRAMEBUFFERSPROC delete_framebuffers = nullptr;
  PFNGLGENRENDERBUFFERSPROC gen_renderbuffers = nullptr;
  PFNGLBINDRENDERBUFFERPROC bind_renderbuffer = nullptr;
  PFNGLDELETERENDERBUFFERSPROC delete_renderbuffers = nullptr;
  PFNGLRENDERBUFFERSTORAGEPROC renderbuffer_storage = nullptr;
  PFNGLFRAMEBUFFERRENDERBUFFERPROC framebuffer_renderbuffer = nullptr;
  PFNGLCHECKFRAMEBUFFERSTATUSPROC check_framebuffer_status = nullptr;

  bool load() {
    return load_gl(viewport, "glViewport") && load_gl(clear_color, "glClearColor") &&
           load_gl(clear, "glClear") && load_gl(finish, "glFinish") &&
           load_gl(pixel_store, "glPixelStorei") && load_gl(read_pixels, "glReadPixels") &&
           load_gl(get_error, "glGetError") && load_gl(gen_framebuffers, "glGenFramebuffers") &&
           load_gl(bind_framebuffer, "glBindFramebuffer") &&
           load_gl(delete_framebuffers, "glDeleteFramebuffers") &&
           load_gl(gen_renderbuffers, "glGenRenderbuffers") &&
           load_gl(bind_renderbuffer, "glBindRenderbuffer") &&
           load_gl(delete_renderbuffers, "glDeleteRenderbuffers") &&
           load_gl(renderbuffer_storage, "glRenderbufferStorage") &&
           load_gl(framebuffer_renderbuffer, "glFramebufferRenderbuffer") &&
           load_gl(check_framebuffer_status, "glCheckFramebufferStatus");
  }
};

class glfw_backend final : public backend {
public:
  explicit glfw_backend(const window_options& o) : options_(o) {
    if (!glfwInit())
      fail(fmt::format("GLFW could not initialise: {}", glfw_error_text()));
    glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
    glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
    glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
    glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
    glfwWindowHint(GLFW_SCALE_TO_MONITOR, GLFW_TRUE);
    if (o.offscreen)
      glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
    window_ = glfwCreateWindow(o.width, o.height, o.title.c_str(), nullptr, nullptr);
    if (window_ == nullptr) {
      const std::string why = glfw_error_text();
      glfwTerminate();
      fail(fmt::format("no OpenGL 3.3 window: {}", why));
    }
    glfwMakeContextCurrent(window_);
    if (!gl_.load()) {
      glfwDestroyWindow(window_);
      glfwTerminate();
      fail("the OpenGL driver lacks OpenGL 3.0 entry points (framebuffer objects)");
    }
    glfwSwapInterval(o.offscreen ? 0 : 1);
    {
      std::lock_guard lock(drop_mutex);
      drop_target = &dropped_;
    }
    glfwSetDropCallback(window_, on_drop);
    if (o.offscreen)
      create_framebuffer();
    ImGui_ImplGlfw_InitForOpenGL(window_, true);
    ImGui_ImplOpenGL3_Init("#version 330 core");
  }

  ~glfw_backend() override {
    ImGui_ImplOpenGL3_Shutdown();
    ImGui_ImplGlfw_Shutdown();
    if (fbo_ != 0) {
      gl_.delete_framebuffers(1, &fbo_);
      gl_.delete_renderbuffers(1, &color_);
    }
    {
      std::lock_guard lock(drop_mutex);
      drop_target = nullptr;
    }
    glfwDestroyWindow(window_);
    glfwTerminate();
  }

  bool should_close() const override { return glfwWindowShouldClose(window_) != 0; }

  void begin_frame(double timeout_s) override {
    if (timeout_s > 0.0)
      glfwWaitEventsTimeout(timeout_s);
    else
      glfwPollEvents();
    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    if (fbo_ != 0) {
      // The hidden window's size does not matter: ImGui draws into the framebuffer.
      ImGuiIO& io = ImGui::GetIO();
      io.DisplaySize =
          ImVec2(static_cast<float>(options_.width), static_cast<float>(options_.height));
      io.DisplayFramebufferScale = ImVec2(1.0f, 1.0f);
    }
  }

  void end_frame() override {
    int w = options_.width;
    int h = options_.height;
    if (fbo_ != 0)
      gl_.bind_framebuffer(GL_FRAMEBUFFER, fbo_);
    else
      glfwGetFramebufferSize(window_, &w, &h);
    gl_.viewport(0, 0, w, h);
    const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
    gl_.clear_color(bg.x, bg.y, bg.z, 1.0f);
    gl_.clear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    if (fbo_ == 0)
      glfwSwapBuffers(window_);
    else
      gl_.finish();
  }

  float content_scale() const override {
    float x = 1.0f;
    float y = 1.0f;
    glfwGetWindowContentScale(window_, &x, &y);
    return std::max(x, 1.0f);
  }

  std::vector<std::string> take_dropped_paths() override {
    std::lock_guard lock(drop_mutex);
    std::vector<std::string> out;
    out.swap(dropped_);
    return out;
  }

  bool read_pixels(int& width, int& height, std::vector<std::uint8_t>& rgba) override {
    width = options_.width;
    height = options_.height;
    if (fbo_ != 0)
      gl_.bind_framebuffer(GL_FRAMEBUFFER, fbo_);
    else
      glfwGetFramebufferSize(window_, &width, &height);
    if (width <= 0 || height <= 0)
      return false;
    rgba.assign(static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 4, 0);
    gl_.pixel_store(GL_PACK_ALIGNMENT, 1);
    gl_.read_pixels(0, 0, width, height, GL_RGBA, GL_UNSIGNED_BYTE, rgba.data());
    if (gl_.get_error() != GL_NO_ERROR)
      return false;
    // OpenGL's first row is the bottom one.
    const std::size_t stride = static_cast<std::size_t>(width) * 4;
    std::vector<std::uint8_t> row(stride);
    for (int y = 0; y < height / 2; ++y) {
      std::uint8_t* a = rgba.data() + static_cast<std::size_t>(y) * stride;
      std::uint8_t* b = rgba.data() + static_cast<std::size_t>(height - 1 - y) * stride;
      std::copy(a, a + stride, row.data());
      std::copy(b, b + stride, a);
      std::copy(row.data(), row.data() + stride, b);
    }
    return true;
  }

  void set_title(const std::string& title) override { glfwSetWindowTitle(window_, title.c_str()); }
  void wake() override { glfwPostEmptyEvent(); }

private:
  void create_framebuffer() {
    gl_.gen_framebuffers(1, &fbo_);
    gl_.bind_framebuffer(GL_FRAMEBUFFER, fbo_);
    gl_.gen_renderbuffers(1, &color_);
    gl_.bind_renderbuffer(GL_RENDERBUFFER, color_);
    gl_.renderbuffer_storage(GL_RENDERBUFFER, GL_RGBA8, options_.width, options_.height);
    gl_.framebuffer_renderbuffer(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, color_);
    if (gl_.check_framebuffer_status(GL_FRAMEBUFFER) != GL_FRAMEBUFFER_COMPLETE)
      fail(fmt::format("cannot create a {}x{} offscreen framebuffer", options_.width,
                       options_.height));
  }

  window_options options_;
  GLFWwindow* window_ = nullptr;
  std::vector<std::string> dropped_;
  gl_functions gl_;
  GLuint fbo_ = 0;
  GLuint color_ = 0;
};

} // namespace

std::unique_ptr<backend> backend::create(const window_options& options) {
  return std::make_unique<glfw_backend>(options);
}

} // namespace tdiag::view
